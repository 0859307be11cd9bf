import { useEffect, useId, useState } from "react";
import type { ToolCallView } from "../lib/messages";
import { STATUS_LABEL, formatDuration, taskView, type TaskStep } from "../lib/subagents";
import { useSubagentTasks } from "./subagentTasks";

interface Props {
  call: ToolCallView;
}

function StepLine({ step }: { step: TaskStep }) {
  if (step.type === "status") return <li className="subagent-step step-status">{step.content}</li>;
  if (step.type === "tool") {
    return (
      <li className={`subagent-step step-tool${step.status === "error" ? " step-error" : ""}`}>
        <span className="step-label">{step.name || "tool"} →</span> {step.content.slice(0, 300) || "(empty)"}
      </li>
    );
  }
  return (
    <li className="subagent-step step-ai">
      {step.content && <span className="step-text">{step.content.slice(0, 500)}</span>}
      {step.toolCalls?.map((c, i) => (
        <span key={i} className="step-call">
          <span className="step-label">{c.name}</span> {c.args.slice(0, 160)}
        </span>
      ))}
    </li>
  );
}

/** Ticks once a second while `on`, so a running card's duration moves. */
function useNow(on: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!on) return;
    const t = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(t);
  }, [on]);
  return now;
}

/** A `task` tool call: the sub-agent's description, status, duration, usage and trail. */
export function SubagentCard({ call }: Props) {
  const live = useSubagentTasks()[call.id];
  const task = taskView(call, live);
  const active = task.status === "running" || task.status === "waiting";
  const [open, setOpen] = useState<boolean | null>(null); // null: open while it works
  const expanded = open ?? active;
  const bodyId = useId();
  const now = useNow(active && task.startedAt !== undefined);
  const seconds =
    task.durationS ?? (active && task.startedAt !== undefined ? Math.max(0, now / 1000 - task.startedAt) : undefined);
  const failed = task.status === "failed" || task.status === "timed_out";
  return (
    <div
      className={`tool-card subagent-card subagent-${task.status}${failed ? " tool-error" : ""}`}
      data-testid="subagent-card"
      data-status={task.status}
      data-task-id={task.id}
    >
      <button
        type="button"
        className="tool-card-header"
        aria-expanded={expanded}
        aria-controls={bodyId}
        onClick={() => setOpen(!expanded)}
      >
        <span className="chevron" aria-hidden="true">{expanded ? "▾" : "▸"}</span>
        <span className="subagent-type">{task.subagentType || "sub-agent"}</span>
        <span className="tool-summary subagent-description">{task.description || "Sub-agent task"}</span>
        {seconds !== undefined && (
          <span className="subagent-meta" data-testid="subagent-duration">
            {formatDuration(seconds)}
          </span>
        )}
        {task.usage && task.usage.total_tokens > 0 && (
          <span className="subagent-meta" data-testid="subagent-usage" title="Tokens used by this sub-agent">
            {task.usage.total_tokens.toLocaleString()} tok
          </span>
        )}
        <span className={`tool-status status-${active ? "running" : failed ? "error" : "done"}`}>
          {active && <span className="spinner" aria-hidden="true" />}
          {STATUS_LABEL[task.status]}
        </span>
      </button>
      {expanded && (
        <div className="tool-card-body" id={bodyId}>
          {task.steps.length > 0 ? (
            <ol className="subagent-trail" data-testid="subagent-trail">
              {task.steps.map((step, i) => (
                <StepLine key={i} step={step} />
              ))}
            </ol>
          ) : (
            <p className="subagent-empty">{active ? "Starting…" : "No progress was recorded."}</p>
          )}
          {task.status === "completed" && task.result && (
            <>
              <div className="tool-section-label">Result</div>
              <pre className="tool-pre" data-testid="subagent-result">{task.result}</pre>
            </>
          )}
          {!active && task.status !== "completed" && (task.error || task.stopReason) && (
            <>
              <div className="tool-section-label">
                {STATUS_LABEL[task.status]}
                {task.stopReason ? ` (${task.stopReason})` : ""}
              </div>
              {task.error && <pre className="tool-pre">{task.error}</pre>}
            </>
          )}
        </div>
      )}
    </div>
  );
}
