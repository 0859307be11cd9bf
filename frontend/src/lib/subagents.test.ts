import { describe, expect, it } from "vitest";
import type { ToolCallView } from "./messages";
import { applyTaskEvent, formatDuration, taskView, type SubagentTask, type TaskMap } from "./subagents";

const fold = (events: unknown[]): TaskMap => events.reduce<TaskMap>((acc, e) => applyTaskEvent(acc, e), {});

function only(tasks: TaskMap, id = "t1"): SubagentTask {
  const task = tasks[id];
  if (!task) throw new Error(`no task ${id}`);
  return task;
}

const call = (over: Partial<ToolCallView> = {}): ToolCallView => ({
  id: "t1",
  name: "task",
  args: { description: "alpha part", prompt: "p", subagent_type: "bash" },
  status: "running",
  ...over,
});

describe("applyTaskEvent", () => {
  it("folds started, running steps and the end into one task", () => {
    const tasks = fold([
      { type: "task_started", task_id: "t1", description: "alpha", subagent_type: "bash", started_at: 100 },
      { type: "task_running", task_id: "t1", message_index: 1, message: { type: "ai", content: "", tool_calls: [{ name: "ls", args: "{}" }] } },
      { type: "task_running", task_id: "t1", message_index: 2, message: { type: "tool", name: "ls", status: "success", content: "a.txt" } },
      { type: "task_completed", task_id: "t1", result: "done!", duration_s: 2.5, usage: { total_tokens: 42, llm_calls: 2 } },
    ]);
    const t = only(tasks);
    expect(t.status).toBe("completed");
    expect(t.description).toBe("alpha");
    expect(t.steps.map((s) => s.type)).toEqual(["ai", "tool"]);
    expect(t.steps[0]?.toolCalls).toEqual([{ name: "ls", args: "{}" }]);
    expect(t.result).toBe("done!");
    expect(t.usage).toEqual({ input_tokens: 0, output_tokens: 0, total_tokens: 42, llm_calls: 2 });
    expect(t.durationS).toBe(2.5);
  });

  it("replaces a rewritten step by its index and tracks waiting", () => {
    const tasks = fold([
      { type: "task_started", task_id: "t1" },
      { type: "task_running", task_id: "t1", message: { type: "status", content: "Waiting for a free sub-agent slot." } },
    ]);
    expect(only(tasks).status).toBe("waiting");
    const later = fold([
      { type: "task_running", task_id: "t1", message_index: 1, message: { type: "ai", content: "x", tool_calls: [{ name: "ls", args: "" }] } },
      { type: "task_running", task_id: "t1", message_index: 1, message: { type: "ai", content: "stopped", tool_calls: [] } },
      { type: "task_timed_out", task_id: "t1", error: "too slow", stop_reason: "timeout" },
    ]);
    expect(only(later).steps).toEqual([{ type: "ai", content: "stopped", toolCalls: [] }]);
    expect(only(later).status).toBe("timed_out");
    expect(only(later).stopReason).toBe("timeout");
  });

  it("ignores other custom events and junk", () => {
    const start: TaskMap = {};
    expect(applyTaskEvent(start, { type: "safety_stop", reason: "x" })).toBe(start);
    expect(applyTaskEvent(start, null)).toBe(start);
    expect(applyTaskEvent(start, { type: "task_running", task_id: "t", message: { type: "weird" } })).toBe(start);
  });
});

describe("taskView", () => {
  it("restores a finished task from its tool result artifact", () => {
    const v = taskView(
      call({
        status: "done",
        result: "Task completed after 1.0s.\n\nResult:\nall good",
        artifact: { status: "completed", duration_s: 1, usage: { total_tokens: 9 }, steps: [{ type: "ai", content: "all good", tool_calls: [] }] },
      }),
      undefined,
    );
    expect(v.status).toBe("completed");
    expect(v.description).toBe("alpha part");
    expect(v.subagentType).toBe("bash");
    expect(v.result).toBe("all good");
    expect(v.steps).toHaveLength(1);
    expect(v.usage?.total_tokens).toBe(9);
  });

  it("is cancelled when its run ended without a result", () => {
    const live = fold([{ type: "task_started", task_id: "t1", description: "alpha part", subagent_type: "bash" }]).t1;
    expect(taskView(call({ status: "running" }), live).status).toBe("running");
    expect(taskView(call({ status: "cancelled" }), live).status).toBe("cancelled");
    expect(taskView(call({ status: "cancelled" }), undefined).status).toBe("cancelled");
  });
});

it("formats durations", () => {
  expect(formatDuration(1.234)).toBe("1.2s");
  expect(formatDuration(42)).toBe("42s");
  expect(formatDuration(125)).toBe("2m 05s");
});
