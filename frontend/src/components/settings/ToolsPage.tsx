import { listTools } from "../../api/extensions";
import { useResource } from "../../hooks/useResource";
import { ErrorNotice } from "../ErrorNotice";
import { SettingsLayout } from "./SettingsLayout";

interface Props {
  onOpenSidebar: () => void;
}

/** The agent's tools by group, and whether the `tools:` config offers each. */
export function ToolsPage({ onOpenSidebar }: Props) {
  const { data, error, setError } = useResource(listTools, "tools");

  const groups = data ? data.groups.filter((g) => data.tools.some((t) => t.group === g)) : [];
  return (
    <SettingsLayout
      title="Tools"
      onOpenSidebar={onOpenSidebar}
      intro={
        <>
          The tools the agent can call. Which ones it gets is set by <code>tools:</code> in config.yaml (enable or disable by
          name or group, add LangChain tools by import path, per-tool timeouts); changes apply to the next message. A
          custom agent can narrow them further by group.
        </>
      }
    >
      {error && <ErrorNotice message={error} onDismiss={() => setError(null)} />}
      {data === null && !error && <p className="settings-note">Loading…</p>}
      {data && data.errors.length > 0 && (
        <ErrorNotice title="Some configured tools failed to load" message={data.errors.join("\n")} />
      )}
      {groups.map((group) => (
        <section key={group} className="settings-card" aria-label={`${group} tools`}>
          <h2>
            {group} <span className="badge">{data?.tools.filter((t) => t.group === group).length}</span>
          </h2>
          <div className="table-wrap">
            <table className="settings-table">
              <thead>
                <tr>
                  <th scope="col">Tool</th>
                  <th scope="col">What it does</th>
                  <th scope="col">Status</th>
                  <th scope="col">Timeout</th>
                </tr>
              </thead>
              <tbody>
                {data?.tools
                  .filter((t) => t.group === group)
                  .map((t) => (
                    <tr key={t.name} data-testid="tool-row">
                      <td>
                        <code>{t.name}</code>
                        {t.source !== "builtin" && <div className="field-hint">{t.source}</div>}
                      </td>
                      <td className="wrap-cell">{t.description}</td>
                      <td>
                        <span className={`badge${t.enabled ? " badge-accent" : ""}`}>{t.enabled ? "on" : "off"}</span>
                      </td>
                      <td>{t.timeout_s ? `${t.timeout_s} s` : "—"}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
        </section>
      ))}
    </SettingsLayout>
  );
}
