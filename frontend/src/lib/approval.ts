import type { ApprovalRequest } from "./types";

/** Every tool approval request among interrupts, in order. */
export function extractApprovals(interrupts: ReadonlyArray<{ value?: unknown }> | undefined | null): ApprovalRequest[] {
  if (!interrupts) return [];
  const out: ApprovalRequest[] = [];
  for (const interrupt of interrupts) {
    const value = interrupt?.value;
    if (!value || typeof value !== "object") continue;
    const v = value as Record<string, unknown>;
    if (v.type !== "tool_approval" || typeof v.tool !== "string" || typeof v.call_id !== "string") continue;
    const args = v.args && typeof v.args === "object" && !Array.isArray(v.args) ? (v.args as Record<string, unknown>) : {};
    out.push({ tool: v.tool, args, callId: v.call_id });
  }
  return out;
}

export interface ApprovalAnswer {
  approved: boolean;
  reason?: string;
  call_id: string;
}

/** The resume value for one answer. */
export function approvalAnswer(request: ApprovalRequest, approved: boolean, reason?: string): ApprovalAnswer {
  const trimmed = reason?.trim();
  return { approved, call_id: request.callId, ...(trimmed ? { reason: trimmed } : {}) };
}
