import { useState } from "react";
import type { Budget, BudgetWindow } from "../api/governance";
import type { TokenUsage } from "../api/rest";
import { formatCount } from "../lib/format";

interface Props {
  usage: TokenUsage | null;
  budget?: Budget | null;
}

function windowText(label: string, w: BudgetWindow): string | null {
  const parts: string[] = [];
  if (w.tokens_limit != null) parts.push(`${formatCount(w.tokens_used)} / ${formatCount(w.tokens_limit)} tokens`);
  if (w.cost_limit_usd != null) parts.push(`$${w.cost_used_usd.toFixed(2)} / $${w.cost_limit_usd.toFixed(2)}`);
  return parts.length ? `${label}: ${parts.join(", ")}` : null;
}

/** Thread token total and the user's budget; expands to the per-run breakdown. */
export function TokenUsageBadge({ usage, budget = null }: Props) {
  const [open, setOpen] = useState(false);
  const limits = budget?.limited
    ? [windowText("Today", budget.daily), windowText("This month", budget.monthly)].filter((t): t is string => t != null)
    : [];
  const low = budget?.limited && [budget.daily, budget.monthly].some((w) => w.tokens_remaining === 0 || w.cost_remaining_usd === 0);
  if ((!usage || usage.total_tokens === 0) && limits.length === 0) return null;
  const total = usage?.total_tokens ?? 0;
  return (
    <div className="token-usage">
      <button
        type="button"
        className={low ? "chip-button danger" : "chip-button"}
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        title="Token usage"
      >
        {formatCount(total)} tokens
      </button>
      {open && (
        <div className="popover" role="dialog" aria-label="Token usage per run">
          {limits.length > 0 && (
            <ul className="budget-lines" data-testid="budget-lines">
              {limits.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          )}
          {usage && <table className="usage-table">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">In</th>
                <th scope="col">Out</th>
                <th scope="col">Total</th>
              </tr>
            </thead>
            <tbody>
              {usage.runs.map((r, i) => (
                <tr key={r.run_id}>
                  <td title={r.run_id}>
                    #{i + 1}
                    {r.model_name ? ` · ${r.model_name}` : ""}
                  </td>
                  <td>{formatCount(r.input_tokens)}</td>
                  <td>{formatCount(r.output_tokens)}</td>
                  <td>{formatCount(r.total_tokens)}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">All ({usage.llm_calls} calls)</th>
                <td>{formatCount(usage.input_tokens)}</td>
                <td>{formatCount(usage.output_tokens)}</td>
                <td>{formatCount(usage.total_tokens)}</td>
              </tr>
            </tfoot>
          </table>}
        </div>
      )}
    </div>
  );
}
