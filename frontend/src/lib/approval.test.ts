import { describe, expect, it } from "vitest";
import { approvalAnswer, extractApprovals } from "./approval";

describe("extractApprovals", () => {
  it("finds tool approval requests and ignores other interrupts", () => {
    const found = extractApprovals([
      { value: { type: "clarification", question: "?" } },
      { value: { type: "tool_approval", tool: "bash", args: { command: "ls" }, call_id: "c1" } },
      { value: { type: "tool_approval", tool: "bash", call_id: 3 } },
      { value: null },
    ]);
    expect(found).toEqual([{ tool: "bash", args: { command: "ls" }, callId: "c1" }]);
  });

  it("is empty without interrupts", () => {
    expect(extractApprovals(undefined)).toEqual([]);
    expect(extractApprovals([])).toEqual([]);
  });
});

describe("approvalAnswer", () => {
  const req = { tool: "bash", args: {}, callId: "c1" };
  it("names the call and keeps a reason only when given", () => {
    expect(approvalAnswer(req, true)).toEqual({ approved: true, call_id: "c1" });
    expect(approvalAnswer(req, false, "  no  ")).toEqual({ approved: false, call_id: "c1", reason: "no" });
    expect(approvalAnswer(req, false, "   ")).toEqual({ approved: false, call_id: "c1" });
  });
});
