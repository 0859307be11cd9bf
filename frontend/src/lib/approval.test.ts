import { describe, expect, it } from "vitest";
import { approvalAnswer, approvalResume, extractApprovals } from "./approval";

describe("extractApprovals", () => {
  it("finds tool approval requests and ignores other interrupts", () => {
    const found = extractApprovals([
      { value: { type: "clarification", question: "?" } },
      { id: "i1", value: { type: "tool_approval", tool: "bash", args: { command: "ls" }, call_id: "c1" } },
      { value: { type: "tool_approval", tool: "bash", call_id: 3 } },
      { value: null },
    ]);
    expect(found).toEqual([{ tool: "bash", args: { command: "ls" }, callId: "c1", interruptId: "i1" }]);
  });

  it("is empty without interrupts", () => {
    expect(extractApprovals(undefined)).toEqual([]);
    expect(extractApprovals([])).toEqual([]);
  });
});

describe("approvalAnswer", () => {
  const req = { tool: "bash", args: {}, callId: "c1", interruptId: null };
  it("names the call and keeps a reason only when given", () => {
    expect(approvalAnswer(req, true)).toEqual({ approved: true, call_id: "c1" });
    expect(approvalAnswer(req, false, "  no  ")).toEqual({ approved: false, call_id: "c1", reason: "no" });
    expect(approvalAnswer(req, false, "   ")).toEqual({ approved: false, call_id: "c1" });
  });
});

describe("approvalResume", () => {
  it("keys the answer by interrupt id when there is one", () => {
    const req = { tool: "bash", args: {}, callId: "c1", interruptId: "i1" };
    expect(approvalResume(req, true)).toEqual({ i1: { approved: true, call_id: "c1" } });
    expect(approvalResume({ ...req, interruptId: null }, false)).toEqual({ approved: false, call_id: "c1" });
  });
});
