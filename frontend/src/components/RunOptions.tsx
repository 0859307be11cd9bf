interface Props {
  planMode: boolean;
  onPlanMode: (on: boolean) => void;
  ultra: boolean;
  onUltra: (on: boolean) => void;
  thinking: boolean;
  onThinking: (on: boolean) => void;
  supportsThinking: boolean;
  disabled?: boolean;
}

/** Toggles sent as run context: plan mode, ultra (sub-agents), and thinking when the model
 * supports it. */
export function RunOptions({ planMode, onPlanMode, ultra, onUltra, thinking, onThinking, supportsThinking, disabled }: Props) {
  return (
    <div className="run-options">
      <label className="toggle" title="Plan mode: the agent keeps a todo list">
        <input type="checkbox" checked={planMode} onChange={(e) => onPlanMode(e.target.checked)} disabled={disabled} />
        <span>Plan</span>
      </label>
      <label className="toggle" title="Ultra: the agent may split the work among sub-agents running in parallel">
        <input type="checkbox" checked={ultra} onChange={(e) => onUltra(e.target.checked)} disabled={disabled} />
        <span>Ultra</span>
      </label>
      {supportsThinking && (
        <label className="toggle" title="Let the model think before answering">
          <input type="checkbox" checked={thinking} onChange={(e) => onThinking(e.target.checked)} disabled={disabled} />
          <span>Think</span>
        </label>
      )}
    </div>
  );
}
