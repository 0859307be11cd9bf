import type { ApprovalRequest } from "./types";

/** Every tool approval request among interrupts, in order. */
export function extractApprovals(interrupts: ReadonlyArray<{ value?: unknown; id?: string }> | undefined | null): ApprovalRequest[] {
  if (!interrupts) return [];
  const out: ApprovalRequest[] = [];
  for (const interrupt of interrupts) {
    const value = interrupt?.value;
    if (!value || typeof value !== "object") continue;
    const v = value as Record<string, unknown>;
    if (v.type !== "tool_approval" || typeof v.tool !== "string" || typeof v.call_id !== "string") continue;
    const args = v.args && typeof v.args === "object" && !Array.isArray(v.args) ? (v.args as Record<string, unknown>) : {};
    out.push({ tool: v.tool, args, callId: v.call_id, interruptId: typeof interrupt.id === "string" ? interrupt.id : null });
  }
  return out;
}

export interface ApprovalAnswer {
  approved: boolean;
  reason?: string;
  call_id: string;
}

/** The answer to one approval. */
export function approvalAnswer(request: ApprovalRequest, approved: boolean, reason?: string): ApprovalAnswer {
  const trimmed = reason?.trim();
  return { approved, call_id: request.callId, ...(trimmed ? { reason: trimmed } : {}) };
}

/** The `Command.resume` value: keyed by interrupt id when known (others keep waiting). */
export function approvalResume(request: ApprovalRequest, approved: boolean, reason?: string): unknown {
  const answer = approvalAnswer(request, approved, reason);
  return request.interruptId ? { [request.interruptId]: answer } : answer;
}
