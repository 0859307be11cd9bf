import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { ApprovalCard } from "./ApprovalCard";

const request = { tool: "bash", args: { command: "rm -rf build" }, callId: "c1", interruptId: "i1" };

describe("ApprovalCard", () => {
  it("shows the tool and its arguments", () => {
    render(<ApprovalCard request={request} onDecide={() => {}} />);
    expect(screen.getByTestId("approval-tool").textContent).toBe("bash");
    expect(screen.getByTestId("approval-args").textContent).toContain("rm -rf build");
  });

  it("approves, or denies with the typed reason", () => {
    const onDecide = vi.fn();
    render(<ApprovalCard request={request} onDecide={onDecide} />);
    fireEvent.click(screen.getByRole("button", { name: "Approve" }));
    expect(onDecide).toHaveBeenLastCalledWith(true);
    fireEvent.change(screen.getByPlaceholderText(/Reason/), { target: { value: "too risky" } });
    fireEvent.click(screen.getByRole("button", { name: "Deny" }));
    expect(onDecide).toHaveBeenLastCalledWith(false, "too risky");
  });

  it("disables its buttons while a run is going", () => {
    render(<ApprovalCard request={request} onDecide={() => {}} disabled />);
    expect(screen.getByRole("button", { name: "Approve" })).toHaveProperty("disabled", true);
  });
});
