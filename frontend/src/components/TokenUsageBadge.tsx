import { useState } from "react";
import type { TokenUsage } from "../api/rest";
import { formatCount } from "../lib/format";

interface Props {
  usage: TokenUsage | null;
}

/** Thread token total; expands to the per-run breakdown. */
export function TokenUsageBadge({ usage }: Props) {
  const [open, setOpen] = useState(false);
  if (!usage || usage.total_tokens === 0) return null;
  return (
    <div className="token-usage">
      <button
        type="button"
        className="chip-button"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        title="Token usage"
      >
        {formatCount(usage.total_tokens)} tokens
      </button>
      {open && (
        <div className="popover" role="dialog" aria-label="Token usage per run">
          <table className="usage-table">
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
          </table>
        </div>
      )}
    </div>
  );
}
