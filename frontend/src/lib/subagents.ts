import type { ToolCallView } from "./messages";

/** How a sub-agent (a `task` tool call) stands. */
export type TaskStatus = "waiting" | "running" | "completed" | "failed" | "cancelled" | "timed_out";

export interface TaskStep {
  type: "ai" | "tool" | "status";
  content: string;
  name?: string;
  status?: string;
  toolCalls?: { name: string; args: string }[];
}

export interface TaskUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  llm_calls: number;
}

export interface SubagentTask {
  id: string;
  description: string;
  subagentType: string;
  status: TaskStatus;
  /** The progress trail, by `message_index` (1-based; a rewritten step replaces its slot). */
  steps: TaskStep[];
  startedAt?: number;
  durationS?: number;
  usage?: TaskUsage;
  result?: string;
  error?: string;
  stopReason?: string | null;
}

export type TaskMap = Readonly<Record<string, SubagentTask>>;

const END_STATUS: Record<string, TaskStatus> = {
  task_completed: "completed",
  task_failed: "failed",
  task_cancelled: "cancelled",
  task_timed_out: "timed_out",
};

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function toStep(raw: unknown): TaskStep | null {
  if (!isObj(raw)) return null;
  const type = raw.type;
  if (type !== "ai" && type !== "tool" && type !== "status") return null;
  const step: TaskStep = { type, content: str(raw.content) ?? "" };
  if (str(raw.name)) step.name = str(raw.name);
  if (str(raw.status)) step.status = str(raw.status);
  if (Array.isArray(raw.tool_calls)) {
    step.toolCalls = raw.tool_calls.filter(isObj).map((c) => ({ name: str(c.name) ?? "", args: str(c.args) ?? "" }));
  }
  return step;
}

function toUsage(raw: unknown): TaskUsage | undefined {
  if (!isObj(raw)) return undefined;
  return {
    input_tokens: num(raw.input_tokens) ?? 0,
    output_tokens: num(raw.output_tokens) ?? 0,
    total_tokens: num(raw.total_tokens) ?? 0,
    llm_calls: num(raw.llm_calls) ?? 0,
  };
}

function blank(id: string): SubagentTask {
  return { id, description: "", subagentType: "", status: "running", steps: [] };
}

/** Fold one `custom` stream event into the tasks (events of other kinds are ignored). */
export function applyTaskEvent(tasks: TaskMap, event: unknown): TaskMap {
  if (!isObj(event)) return tasks;
  const type = str(event.type);
  const id = str(event.task_id);
  if (!type || !id || !type.startsWith("task_")) return tasks;
  const prev = tasks[id] ?? blank(id);
  let next: SubagentTask;
  if (type === "task_started") {
    next = {
      ...prev,
      description: str(event.description) ?? prev.description,
      subagentType: str(event.subagent_type) ?? prev.subagentType,
      startedAt: num(event.started_at) ?? prev.startedAt,
      status: "running",
    };
  } else if (type === "task_running") {
    const step = toStep(event.message);
    if (!step) return tasks;
    const steps = [...prev.steps];
    const index = num(event.message_index);
    if (index !== undefined && index >= 1 && index <= steps.length) steps[index - 1] = step;
    else steps.push(step);
    // A "waiting for a slot" note is shown only while nothing else happened.
    const waiting = step.type === "status" && prev.steps.length === 0;
    next = { ...prev, steps, status: waiting ? "waiting" : "running" };
  } else if (END_STATUS[type]) {
    next = {
      ...prev,
      status: END_STATUS[type],
      durationS: num(event.duration_s),
      usage: toUsage(event.usage),
      result: str(event.result),
      error: str(event.error),
      stopReason: str(event.stop_reason) ?? null,
    };
  } else {
    return tasks;
  }
  return { ...tasks, [id]: next };
}

/** The task as saved in its tool result (`artifact`), for threads loaded from state. */
function fromArtifact(call: ToolCallView): Partial<SubagentTask> | null {
  const art = call.artifact;
  if (!isObj(art)) return null;
  const status = str(art.status);
  const steps = Array.isArray(art.steps) ? art.steps.map(toStep).filter((s): s is TaskStep => s !== null) : [];
  return {
    status: status && status in STATUS_LABEL ? (status as TaskStatus) : undefined,
    steps,
    durationS: num(art.duration_s),
    usage: toUsage(art.usage),
    stopReason: str(art.stop_reason) ?? null,
    subagentType: str(art.subagent_type),
  };
}

/**
 * What a `task` card shows: the live events when there are any, else what the tool result
 * saved; a call with neither is running while its run is, and cancelled once it is not.
 */
export function taskView(call: ToolCallView, live: SubagentTask | undefined): SubagentTask {
  const args = call.args;
  const base: SubagentTask = {
    ...blank(call.id),
    description: str(args.description) ?? "",
    subagentType: str(args.subagent_type) ?? "",
  };
  const saved = fromArtifact(call);
  let task: SubagentTask = { ...base };
  if (saved) {
    task = {
      ...task,
      ...Object.fromEntries(Object.entries(saved).filter(([, v]) => v !== undefined)),
    } as SubagentTask;
    if (call.result !== undefined && task.status !== "completed") task.error = task.error ?? call.result;
    if (call.result !== undefined && task.status === "completed") task.result = resultOf(call.result);
  }
  if (live) {
    task = { ...task, ...live, description: live.description || task.description };
    if (live.steps.length === 0 && task.steps.length === 0 && saved?.steps) task.steps = saved.steps;
  }
  if (!saved && (!live || live.status === "running" || live.status === "waiting")) {
    if (call.status === "cancelled") task.status = "cancelled";
    else if (call.status === "error") task.status = "failed";
    else if (call.status === "done") task.status = "completed";
  }
  if (!live && !saved && call.result !== undefined && task.status === "failed") task.error = call.result;
  return task;
}

function resultOf(text: string): string {
  const marker = "\n\nResult:\n";
  const at = text.indexOf(marker);
  return at >= 0 ? text.slice(at + marker.length) : text;
}

export const STATUS_LABEL: Record<TaskStatus, string> = {
  waiting: "waiting for a slot",
  running: "running",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  timed_out: "timed out",
};

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)}s`;
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return `${m}m ${s.toString().padStart(2, "0")}s`;
}
