import { useId, useState } from "react";
import type { ToolCallView } from "../lib/messages";

const STATUS_LABEL: Record<ToolCallView["status"], string> = {
  running: "running",
  done: "done",
  error: "error",
  cancelled: "stopped",
  waiting: "waiting for you",
};

function summarize(args: Record<string, unknown>): string {
  const first = Object.values(args).find((v) => typeof v === "string" || typeof v === "number");
  if (first === undefined) return "";
  const s = String(first).replace(/\s+/g, " ");
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

interface Props {
  call: ToolCallView;
}

/** A collapsible card: tool name, status, then arguments and result. */
export function ToolCallCard({ call }: Props) {
  const [open, setOpen] = useState(call.status === "error");
  const bodyId = useId();
  const summary = summarize(call.args);
  return (
    <div className={`tool-card tool-${call.status}`} data-testid="tool-card" data-status={call.status}>
      <button
        type="button"
        className="tool-card-header"
        aria-expanded={open}
        aria-controls={bodyId}
        onClick={() => setOpen((o) => !o)}
      >
        <span className="chevron" aria-hidden="true">{open ? "▾" : "▸"}</span>
        <span className="tool-name">{call.name}</span>
        {call.server && (
          <span className="tool-server" data-testid="tool-server" title={`From the MCP server ${call.server}`}>
            MCP · {call.server}
          </span>
        )}
        {summary && <span className="tool-summary">{summary}</span>}
        <span className={`tool-status status-${call.status}`}>
          {call.status === "running" && <span className="spinner" aria-hidden="true" />}
          {STATUS_LABEL[call.status]}
        </span>
      </button>
      {open && (
        <div className="tool-card-body" id={bodyId}>
          <div className="tool-section-label">Arguments</div>
          <pre className="tool-pre">{JSON.stringify(call.args, null, 2)}</pre>
          {call.result !== undefined && (
            <>
              <div className="tool-section-label">{call.status === "error" ? "Error" : "Result"}</div>
              <pre className="tool-pre">{call.result || "(empty)"}</pre>
            </>
          )}
        </div>
      )}
    </div>
  );
}
