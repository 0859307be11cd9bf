import { useState, type FormEvent } from "react";
import {
  createAgent,
  deleteAgent,
  draftOf,
  EMPTY_DRAFT,
  fieldsOf,
  isHyphenCase,
  listSkills,
  TOOL_GROUPS,
  updateAgent,
  type AgentDraft,
} from "../../api/extensions";
import { useGateway } from "../../api/gateway";
import type { ModelInfo } from "../../api/rest";
import type { AgentsState } from "../../hooks/useAgents";
import { useResource } from "../../hooks/useResource";
import { modelLabel } from "../../lib/models";
import { ErrorNotice } from "../ErrorNotice";
import { SettingsLayout } from "./SettingsLayout";

interface Props {
  agents: AgentsState;
  models: ModelInfo[];
  onOpenSidebar: () => void;
  onChat: (name: string) => void;
}

function toggled(list: string[], item: string, on: boolean): string[] {
  return on ? [...new Set([...list, item])] : list.filter((x) => x !== item);
}

/** Custom agents: each is an assistant of the lead agent with its own persona, model, tools and skills. */
export function AgentsPage({ agents, models, onOpenSidebar, onChat }: Props) {
  const { fetch } = useGateway();
  const [draft, setDraft] = useState<AgentDraft>(EMPTY_DRAFT);
  const [editing, setEditing] = useState<string | null>(null);
  const { data: skillList, error, setError, act } = useResource(listSkills, "the skills");
  const [busy, setBusy] = useState(false);
  const skills = skillList?.skills ?? [];

  const nameOk = editing !== null || isHyphenCase(draft.name);
  const set = (patch: Partial<AgentDraft>) => setDraft((d) => ({ ...d, ...patch }));
  const reset = () => {
    setDraft(EMPTY_DRAFT);
    setEditing(null);
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (busy || !nameOk) return;
    setBusy(true);
    setError(null);
    await act("save the agent", async () => {
      if (editing) await updateAgent(fetch, editing, fieldsOf(draft));
      else await createAgent(fetch, draft.name, fieldsOf(draft));
      reset();
      agents.refresh();
    });
    setBusy(false);
  };

  const remove = async (name: string) => {
    await act(`delete ${name}`, async () => {
      await deleteAgent(fetch, name);
      if (agents.selected?.name === name) agents.select(null);
      if (editing === name) reset();
      agents.refresh();
    });
  };

  return (
    <SettingsLayout
      title="Agents"
      onOpenSidebar={onOpenSidebar}
      intro={
        <>
          A custom agent is an assistant of the lead agent with its own persona, model, tools and skills. Pick it in the
          chat, or run it from the SDK with its <code>assistant_id</code>.
        </>
      }
    >
      {error && <ErrorNotice message={error} onDismiss={() => setError(null)} />}

      <section className="settings-card" aria-labelledby="agent-form-title">
        <h2 id="agent-form-title">{editing ? `Edit “${editing}”` : "Create an agent"}</h2>
        <form className="agent-form" onSubmit={(e) => void save(e)}>
          <label className="field">
            <span>Name</span>
            <input
              value={draft.name}
              onChange={(e) => set({ name: e.target.value })}
              placeholder="e.g. sql-helper"
              maxLength={64}
              disabled={editing !== null}
              aria-invalid={draft.name !== "" && !nameOk}
              required
            />
            <span className="field-hint">Lower-case letters, digits and single hyphens.</span>
          </label>
          <label className="field">
            <span>Description</span>
            <input value={draft.description} onChange={(e) => set({ description: e.target.value })} maxLength={1024} />
          </label>
          <label className="field">
            <span>Model</span>
            <select value={draft.model} onChange={(e) => set({ model: e.target.value })} aria-label="Agent model">
              <option value="">Default model</option>
              {models.map((m) => (
                <option key={m.name} value={m.name}>
                  {modelLabel(m)}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span>Persona / system prompt</span>
            <textarea
              rows={5}
              value={draft.systemPrompt}
              onChange={(e) => set({ systemPrompt: e.target.value })}
              placeholder="You are a careful data engineer. Answer with SQL first, then explain."
            />
          </label>
          <fieldset className="field">
            <legend>Tool groups</legend>
            <label className="toggle">
              <input type="checkbox" checked={draft.allTools} onChange={(e) => set({ allTools: e.target.checked })} />
              All tools
            </label>
            {!draft.allTools && (
              <div className="check-row">
                {TOOL_GROUPS.map((g) => (
                  <label key={g} className="toggle">
                    <input
                      type="checkbox"
                      checked={draft.toolGroups.includes(g)}
                      onChange={(e) => set({ toolGroups: toggled(draft.toolGroups, g, e.target.checked) })}
                    />
                    {g}
                  </label>
                ))}
              </div>
            )}
          </fieldset>
          <fieldset className="field">
            <legend>Skills</legend>
            <label className="toggle">
              <input type="checkbox" checked={draft.allSkills} onChange={(e) => set({ allSkills: e.target.checked })} />
              All enabled skills
            </label>
            {!draft.allSkills && (
              <div className="check-row">
                {skills.map((s) => (
                  <label key={s.name} className="toggle" title={s.description}>
                    <input
                      type="checkbox"
                      checked={draft.skills.includes(s.name)}
                      onChange={(e) => set({ skills: toggled(draft.skills, s.name, e.target.checked) })}
                    />
                    {s.name}
                  </label>
                ))}
              </div>
            )}
          </fieldset>
          <div className="form-actions">
            {editing && (
              <button type="button" className="chip-button" onClick={reset}>
                Cancel
              </button>
            )}
            <button type="submit" className="primary" disabled={busy || !nameOk}>
              {busy ? "Saving…" : editing ? "Save changes" : "Create agent"}
            </button>
          </div>
        </form>
      </section>

      <section className="settings-card" aria-labelledby="agents-title">
        <h2 id="agents-title">Your agents</h2>
        {agents.agents.length === 0 && <p className="settings-note">No custom agents yet.</p>}
        {agents.agents.length > 0 && (
          <ul className="ext-list">
            {agents.agents.map((a) => (
              <li key={a.name} className="ext-item" data-testid="agent-row">
                <div className="ext-head">
                  <strong>{a.name}</strong>
                  {a.model && <span className="badge">{a.model}</span>}
                  <span className="badge">v{a.version ?? 1}</span>
                </div>
                {a.description && <p className="ext-desc">{a.description}</p>}
                <p className="field-hint">
                  Tools: {a.tool_groups ? a.tool_groups.join(", ") || "none" : "all"} · Skills:{" "}
                  {a.skills ? a.skills.join(", ") || "none" : "all enabled"}
                </p>
                <div className="row-actions">
                  <button type="button" className="chip-button" onClick={() => onChat(a.name)}>
                    Chat
                  </button>
                  <button
                    type="button"
                    className="chip-button"
                    aria-label={`Edit ${a.name}`}
                    onClick={() => {
                      setEditing(a.name);
                      setDraft(draftOf(a));
                    }}
                  >
                    Edit
                  </button>
                  <button type="button" className="chip-button danger" aria-label={`Delete ${a.name}`} onClick={() => void remove(a.name)}>
                    Delete
                  </button>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
    </SettingsLayout>
  );
}
