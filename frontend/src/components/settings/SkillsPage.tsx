import { useRef, useState } from "react";
import {
  deleteCustomSkill,
  getSkill,
  installSkill,
  listSkills,
  setSkillEnabled,
  type SkillDetail,
} from "../../api/extensions";
import { useGateway } from "../../api/gateway";
import { useResource } from "../../hooks/useResource";
import { ErrorNotice } from "../ErrorNotice";
import { SettingsLayout } from "./SettingsLayout";

interface Props {
  onOpenSidebar: () => void;
}

/** Skills: list with enable switches, install a `.skill` archive, view a SKILL.md, delete custom ones. */
export function SkillsPage({ onOpenSidebar }: Props) {
  const { fetch } = useGateway();
  const { data, setData, error, setError, reload: refresh, act } = useResource(listSkills, "skills");
  const [notice, setNotice] = useState<string | null>(null);
  const [viewing, setViewing] = useState<SkillDetail | null>(null);
  const [busy, setBusy] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);

  const toggle = async (name: string, enabled: boolean) => {
    await act(`${enabled ? "enable" : "disable"} ${name}`, async () => {
      const updated = await setSkillEnabled(fetch, name, enabled);
      setData((d) => d && { ...d, skills: d.skills.map((s) => (s.name === name ? updated : s)) });
    });
  };

  const install = async (file: File | undefined) => {
    if (!file || busy) return;
    setBusy(true);
    setError(null);
    setNotice(null);
    await act(`install ${file.name}`, async () => {
      const skill = await installSkill(fetch, file);
      setNotice(`Installed “${skill.name}”. Start a message with /${skill.name} to use it directly.`);
      refresh();
    });
    setBusy(false);
    if (fileInput.current) fileInput.current.value = "";
  };

  const view = async (name: string) => {
    await act(`open ${name}`, async () => setViewing(await getSkill(fetch, name)));
  };

  const remove = async (name: string) => {
    await act(`delete ${name}`, async () => {
      await deleteCustomSkill(fetch, name);
      if (viewing?.name === name) setViewing(null);
      refresh();
    });
  };

  return (
    <SettingsLayout
      title="Skills"
      onOpenSidebar={onOpenSidebar}
      intro={
        <>
          A skill is a folder with a <code>SKILL.md</code> that teaches the agent a job. Enabled skills are listed in the
          agent's prompt and it reads one when a request matches; <code>/skill-name task</code> in a message activates one
          directly.
        </>
      }
    >
      {error && <ErrorNotice message={error} onDismiss={() => setError(null)} />}
      {notice && (
        <p className="settings-note" role="status">
          {notice}
        </p>
      )}

      <section className="settings-card" aria-labelledby="install-skill-title">
        <h2 id="install-skill-title">Install a skill</h2>
        <p className="settings-note">
          Upload a <code>.skill</code> file (a zip of the skill's folder). It becomes one of your custom skills.
        </p>
        <label className="field">
          <span>Skill archive</span>
          <input
            ref={fileInput}
            type="file"
            accept=".skill,.zip,application/zip"
            aria-label="Skill archive"
            disabled={busy}
            onChange={(e) => void install(e.target.files?.[0])}
          />
        </label>
        {busy && <p className="settings-note">Installing…</p>}
      </section>

      <section className="settings-card" aria-labelledby="skills-title">
        <h2 id="skills-title">Available skills</h2>
        {data === null && !error && <p className="settings-note">Loading…</p>}
        {data?.skills.length === 0 && <p className="settings-note">No skills found.</p>}
        {data && data.skills.length > 0 && (
          <ul className="ext-list">
            {data.skills.map((s) => (
              <li key={s.name} className="ext-item" data-testid="skill-row">
                <div className="ext-head">
                  <strong>{s.name}</strong>
                  <span className={`badge${s.category === "custom" ? " badge-accent" : ""}`}>{s.category}</span>
                  {s.allowed_tools && <span className="badge" title={s.allowed_tools.join(", ")}>limits tools</span>}
                  <label className="toggle ext-toggle">
                    <input
                      type="checkbox"
                      checked={s.enabled}
                      aria-label={`Enable ${s.name}`}
                      onChange={(e) => void toggle(s.name, e.target.checked)}
                    />
                    {s.enabled ? "Enabled" : "Disabled"}
                  </label>
                </div>
                <p className="ext-desc">{s.description}</p>
                <div className="row-actions">
                  <button type="button" className="chip-button" onClick={() => void view(s.name)}>
                    View SKILL.md
                  </button>
                  {s.editable && (
                    <button type="button" className="chip-button danger" aria-label={`Delete ${s.name}`} onClick={() => void remove(s.name)}>
                      Delete
                    </button>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
        {data && data.problems.length > 0 && (
          <details className="ext-problems">
            <summary>{data.problems.length} folder(s) skipped as invalid</summary>
            <ul>
              {data.problems.map((p) => (
                <li key={p.path}>
                  <code>{p.path}</code>: {p.error}
                </li>
              ))}
            </ul>
          </details>
        )}
      </section>

      {viewing && (
        <section className="settings-card" aria-label={`SKILL.md of ${viewing.name}`}>
          <div className="ext-head">
            <h2>{viewing.name}/SKILL.md</h2>
            <button type="button" className="chip-button" onClick={() => setViewing(null)}>
              Close
            </button>
          </div>
          <p className="settings-note">
            In the sandbox: <code>{viewing.location}</code>
          </p>
          <pre className="ext-source" data-testid="skill-content">{viewing.content}</pre>
        </section>
      )}
    </SettingsLayout>
  );
}
