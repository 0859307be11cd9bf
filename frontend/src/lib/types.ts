import type { Message } from "@langchain/langgraph-sdk";

/** One entry of the agent's plan-mode todo list. */
export interface Todo {
  content: string;
  status: "pending" | "in_progress" | "completed";
}

/** A file attached to a human message (kept in `additional_kwargs.files`). */
export interface AttachedFile {
  name: string;
  size: number;
  virtual_path?: string;
  url?: string;
  /** A document's Markdown copy, made at upload (the agent reads that). */
  markdown?: { virtual_path: string } | null;
}

/** The lead agent's thread state, as far as the UI reads it. */
export interface AgentState extends Record<string, unknown> {
  messages: Message[];
  title?: string | null;
  artifacts?: string[];
  todos?: Todo[];
  uploaded_files?: unknown[];
}

/** Per-run options sent as run `context`. */
export interface RunContext extends Record<string, unknown> {
  model_name?: string;
  thinking_enabled: boolean;
  is_plan_mode: boolean;
  /** "Ultra" mode: the agent may delegate to sub-agents (the `task` tool). */
  subagent_enabled: boolean;
  reasoning_effort?: "low" | "medium" | "high";
}

export interface ClarificationRequest {
  question: string;
  options: string[];
}

/** A tool call waiting for the user's OK (`{type: "tool_approval", tool, args, call_id}`). */
export interface ApprovalRequest {
  tool: string;
  args: Record<string, unknown>;
  callId: string;
  /** The interrupt's id: the resume value is keyed by it (several may be pending). */
  interruptId: string | null;
}
