import type { Message } from "@langchain/langgraph-sdk";
import { contentImages, contentText, reasoningText, toolResultText } from "./content";
import { isErrorFallback } from "./errors";
import { isStopped } from "./stop";
import type { AttachedFile } from "./types";

export type ToolStatus = "running" | "done" | "error" | "cancelled" | "waiting";

export interface ToolCallView {
  id: string;
  name: string;
  args: Record<string, unknown>;
  status: ToolStatus;
  result?: string;
  /** The tool result's `artifact` (the `task` tool saves its sub-agent's outcome there). */
  artifact?: unknown;
  /** The MCP server the tool belongs to (from its result's `additional_kwargs.mcp_server`). */
  server?: string;
}

/** The MCP server named on a tool result, if it came from one. */
export function mcpServerOf(result: Message | undefined): string | undefined {
  const extra = (result as { additional_kwargs?: Record<string, unknown> } | undefined)?.additional_kwargs;
  const server = extra?.mcp_server;
  return typeof server === "string" && server ? server : undefined;
}

/** One AI message's visible parts. */
export interface AssistantPart {
  id: string;
  text: string;
  reasoning: string;
  isError: boolean;
  toolCalls: ToolCallView[];
  /** The answer was cut off by Stop (kept on screen, not saved in the thread). */
  stopped?: boolean;
}

export type ChatItem =
  | { kind: "human"; id: string; text: string; files: AttachedFile[]; images: string[] }
  | { kind: "assistant"; id: string; parts: AssistantPart[] };

function messageId(message: Message, index: number): string {
  return message.id ?? `idx-${index}`;
}

function attachedFiles(message: Message): AttachedFile[] {
  const raw = message.additional_kwargs?.files;
  if (!Array.isArray(raw)) return [];
  const files: AttachedFile[] = [];
  for (const f of raw) {
    if (!f || typeof f !== "object") continue;
    const o = f as Record<string, unknown>;
    if (typeof o.name !== "string") continue;
    files.push({
      name: o.name,
      size: typeof o.size === "number" ? o.size : 0,
      virtual_path: typeof o.virtual_path === "string" ? o.virtual_path : undefined,
      url: typeof o.url === "string" ? o.url : undefined,
    });
  }
  return files;
}

/** The ToolMessage of a clarifying question still waiting for its answer: its artifact has
 * the question (`human_input`) and no `human_input_response` yet. It is no result. */
function isPendingQuestion(m: Message): boolean {
  if (m.type !== "tool" || !("artifact" in m)) return false;
  const artifact: unknown = m.artifact;
  if (!artifact || typeof artifact !== "object") return false;
  return "human_input" in artifact && !("human_input_response" in artifact);
}

function toolStatus(result: Message | undefined, running: boolean, waiting: boolean): ToolStatus {
  if (!result) return running ? "running" : waiting ? "waiting" : "cancelled";
  if (result.type === "tool" && result.status === "error") return "error";
  return "done";
}

/**
 * Turn a flat message list into chat items: each human message, then one
 * assistant block per run of AI/tool messages. Tool results are attached to
 * the tool call that produced them (by `tool_call_id`); a call without a
 * result is `running` while the run is active, `waiting` while the run waits for the
 * user (a clarification), and `cancelled` otherwise.
 */
export function groupMessages(messages: readonly Message[], isRunning: boolean, isWaiting = false): ChatItem[] {
  // While the run waits (or runs on), an unanswered question is no result: its card waits.
  // Afterwards (answered by a new message instead of a resume) it is the call's result.
  const hidePending = isWaiting || isRunning;
  const results = new Map<string, Message>();
  for (const m of messages) {
    if (m.type === "tool" && m.tool_call_id && !(hidePending && isPendingQuestion(m))) {
      results.set(m.tool_call_id, m);
    }
  }
  const claimed = new Set<string>();
  const items: ChatItem[] = [];
  let current: Extract<ChatItem, { kind: "assistant" }> | null = null;

  const ensureBlock = (id: string) => {
    if (!current) {
      current = { kind: "assistant", id, parts: [] };
      items.push(current);
    }
    return current;
  };

  messages.forEach((m, index) => {
    const id = messageId(m, index);
    if (m.type === "human") {
      current = null;
      items.push({
        kind: "human",
        id,
        text: contentText(m.content),
        files: attachedFiles(m),
        images: contentImages(m.content),
      });
      return;
    }
    if (m.type === "ai") {
      const toolCalls: ToolCallView[] = (m.tool_calls ?? []).map((call, i) => {
        const callId = call.id ?? `${id}-call-${i}`;
        const result = call.id ? results.get(call.id) : undefined;
        if (call.id && result) claimed.add(call.id);
        return {
          id: callId,
          name: call.name,
          args: (call.args ?? {}) as Record<string, unknown>,
          status: toolStatus(result, isRunning, isWaiting),
          result: result ? toolResultText(result.content) : undefined,
          ...(result && "artifact" in result && result.artifact != null ? { artifact: result.artifact } : {}),
          ...(mcpServerOf(result) ? { server: mcpServerOf(result) } : {}),
        };
      });
      const part: AssistantPart = {
        id,
        text: contentText(m.content),
        reasoning: reasoningText(m),
        isError: isErrorFallback(m),
        toolCalls,
        ...(isStopped(m) ? { stopped: true } : {}),
      };
      if (!part.text && !part.reasoning && toolCalls.length === 0) {
        // An empty chunk (stream just started): keep the block so the UI shows "thinking".
        ensureBlock(id);
        return;
      }
      ensureBlock(id).parts.push(part);
      return;
    }
    if (m.type === "tool") {
      if (m.tool_call_id && claimed.has(m.tool_call_id)) return;
      if (hidePending && isPendingQuestion(m)) return;
      // A result whose call we never saw: show it on its own.
      ensureBlock(id).parts.push({
        id,
        text: "",
        reasoning: "",
        isError: false,
        toolCalls: [
          {
            id: m.tool_call_id || id,
            name: m.name ?? "tool",
            args: {},
            status: m.status === "error" ? "error" : "done",
            result: toolResultText(m.content),
            ...(mcpServerOf(m) ? { server: mcpServerOf(m) } : {}),
          },
        ],
      });
    }
    // system / function / remove messages are not shown.
  });
  return items;
}

/** Text of the last human message (a fallback title for untitled threads). */
export function lastHumanText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m && m.type === "human") return contentText(m.content);
  }
  return "";
}
