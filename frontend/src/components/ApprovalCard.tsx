import { useState } from "react";
import type { ApprovalRequest } from "../lib/types";

interface Props {
  request: ApprovalRequest;
  onDecide: (approved: boolean, reason?: string) => void;
  disabled?: boolean;
}

/** A tool call waiting for the user's OK: the tool, its arguments, approve or deny. */
export function ApprovalCard({ request, onDecide, disabled }: Props) {
  const [reason, setReason] = useState("");
  const args = JSON.stringify(request.args, null, 2);
  return (
    <section className="approval" aria-label="Approval needed" data-testid="approval-card">
      <p className="approval-title">
        The assistant wants to run <code data-testid="approval-tool">{request.tool}</code>
      </p>
      <pre className="approval-args" data-testid="approval-args">{args}</pre>
      <div className="approval-actions">
        <label className="visually-hidden" htmlFor={`approval-reason-${request.callId}`}>Reason (optional)</label>
        <input
          id={`approval-reason-${request.callId}`}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          placeholder="Reason for denying (optional)"
          disabled={disabled}
        />
        <button type="button" className="danger" disabled={disabled} onClick={() => onDecide(false, reason)}>
          Deny
        </button>
        <button type="button" className="primary" disabled={disabled} onClick={() => onDecide(true)}>
          Approve
        </button>
      </div>
    </section>
  );
}
