import type { AgentsState } from "../hooks/useAgents";

interface Props {
  agents: AgentsState;
  disabled?: boolean;
}

/** Which agent answers: the default lead agent or one of the user's custom agents. */
export function AgentPicker({ agents, disabled }: Props) {
  if (agents.agents.length === 0) return null;
  return (
    <label className="model-picker">
      <span className="visually-hidden">Agent</span>
      <select
        aria-label="Agent"
        value={agents.selected?.name ?? ""}
        disabled={disabled}
        onChange={(e) => agents.select(e.target.value || null)}
      >
        <option value="">Default agent</option>
        {agents.agents.map((a) => (
          <option key={a.name} value={a.name} title={a.description}>
            {a.name}
          </option>
        ))}
      </select>
    </label>
  );
}
