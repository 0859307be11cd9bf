import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { ToolCallView } from "../lib/messages";
import { applyTaskEvent, type TaskMap } from "../lib/subagents";
import { SubagentCard } from "./SubagentCard";
import { SubagentTasksContext } from "./subagentTasks";

const call: ToolCallView = {
  id: "t1",
  name: "task",
  args: { description: "count the files", prompt: "p", subagent_type: "bash" },
  status: "running",
};

function withTasks(tasks: TaskMap, c: ToolCallView = call) {
  return render(
    <SubagentTasksContext.Provider value={tasks}>
      <SubagentCard call={c} />
    </SubagentTasksContext.Provider>,
  );
}

describe("SubagentCard", () => {
  it("shows a live task open with its trail, then collapses on click", async () => {
    let tasks: TaskMap = {};
    for (const e of [
      { type: "task_started", task_id: "t1", description: "count the files", subagent_type: "bash", started_at: Date.now() / 1000 },
      { type: "task_running", task_id: "t1", message_index: 1, message: { type: "ai", content: "Listing", tool_calls: [{ name: "ls", args: "{\"path\": \"/\"}" }] } },
    ])
      tasks = applyTaskEvent(tasks, e);
    withTasks(tasks);
    const card = screen.getByTestId("subagent-card");
    expect(card).toHaveAttribute("data-status", "running");
    expect(screen.getByText("bash")).toBeInTheDocument();
    expect(screen.getByText("count the files")).toBeInTheDocument();
    expect(screen.getByText("Listing")).toBeInTheDocument();
    const header = screen.getByRole("button", { name: /count the files/ });
    expect(header).toHaveAttribute("aria-expanded", "true");
    await userEvent.click(header);
    expect(header).toHaveAttribute("aria-expanded", "false");
    expect(screen.queryByText("Listing")).toBeNull();
  });

  it("shows a finished task collapsed, with duration and usage, and its result on demand", async () => {
    const tasks = applyTaskEvent({}, { type: "task_completed", task_id: "t1", result: "42 files", duration_s: 3.2, usage: { total_tokens: 1234 } });
    withTasks(tasks, { ...call, status: "done" });
    expect(screen.getByTestId("subagent-card")).toHaveAttribute("data-status", "completed");
    expect(screen.getByTestId("subagent-duration")).toHaveTextContent("3.2s");
    expect(screen.getByTestId("subagent-usage")).toHaveTextContent("1,234 tok");
    await userEvent.click(screen.getByRole("button", { name: /count the files/ }));
    expect(screen.getByTestId("subagent-result")).toHaveTextContent("42 files");
  });

  it("shows the stop reason of a failed task", async () => {
    const tasks = applyTaskEvent({}, { type: "task_failed", task_id: "t1", error: "turn limit", stop_reason: "max_turns" });
    withTasks(tasks, { ...call, status: "error" });
    expect(screen.getByText("failed")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: /count the files/ }));
    expect(screen.getByText("failed (max_turns)")).toBeInTheDocument();
    expect(screen.getByText("turn limit")).toBeInTheDocument();
  });
});
