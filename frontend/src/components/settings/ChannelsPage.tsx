import { useState, type FormEvent, type ReactNode } from "react";
import { useGateway } from "../../api/gateway";
import {
  MASK,
  fetchChannels,
  fetchChannelsConfig,
  fetchConnections,
  requestConnectCode,
  restartChannel,
  revokeConnection,
  saveChannelConfig,
  type ChannelSection,
  type ChannelStatus,
  type ChannelsConfig,
  type ConnectCode,
  type Connection,
  sectionSchema,
} from "../../api/channels";
import { HttpError, type Fetch } from "../../api/http";
import { useResource, type Poll } from "../../hooks/useResource";
import { formFields, fromDraft, isStored, platformLabel, toDraft, type Draft, type FormField } from "../../lib/channelForm";
import { describeError } from "../../lib/errors";
import { ErrorNotice } from "../ErrorNotice";
import { CopyButton } from "./CopyButton";
import { SettingsLayout } from "./SettingsLayout";

/** What changes on the gateway by itself: each channel's state, and the caller's linked accounts. */
interface Live {
  statuses: ChannelStatus[];
  connections: Connection[];
}

async function loadLive(fetch: Fetch): Promise<Live> {
  const [statuses, connections] = await Promise.all([fetchChannels(fetch), fetchConnections(fetch)]);
  return { statuses, connections };
}

/** Status and connections, again every few seconds (a channel starting, a /connect sent). */
const LIVE_POLL: Poll<Live> = { every: 2000 };

/** The channels' settings; null for a caller the gateway does not show them to. */
async function loadSettings(fetch: Fetch): Promise<ChannelsConfig | null> {
  try {
    return await fetchChannelsConfig(fetch);
  } catch (e) {
    if (e instanceof HttpError && e.status === 403) return null;
    throw e;
  }
}

type State = "not set up" | "disabled" | "running" | "standby" | "stopped";

function stateOf(section: ChannelSection | undefined, status: ChannelStatus | undefined): State {
  if (section && !section.configured) return "not set up";
  if (!status) return section ? "stopped" : "not set up";
  if (!status.enabled) return "disabled";
  if (status.running) return "running";
  return status.standby ? "standby" : "stopped";
}

const STATE_CLASS: Record<State, string> = {
  "not set up": "badge",
  disabled: "badge",
  running: "badge badge-ok",
  standby: "badge badge-accent",
  stopped: "badge badge-danger",
};

const STATE_TITLE: Record<State, string> = {
  "not set up": "No channels section for it in config.yaml yet",
  disabled: "Configured, but enabled: false",
  running: "This gateway receives its messages",
  standby: "Another gateway replica receives its messages; this one takes over if it stops",
  stopped: "Enabled but not receiving (see the error)",
};

/** A schema description with its `code` spans as code. */
function withCode(text: string): ReactNode[] {
  return text.split("`").map((part, i) => (i % 2 ? <code key={i}>{part}</code> : part));
}

function minutesUntil(iso: string): number {
  return Math.max(1, Math.round((Date.parse(iso) - Date.now()) / 60000));
}

interface IssuedCode extends ConnectCode {
  known: string[]; // connection ids when it was issued
}

interface Editing {
  name: string;
  fields: FormField[];
  draft: Draft;
  enabled: boolean;
}

interface Props {
  isAdmin: boolean;
  onOpenSidebar: () => void;
}

/** IM channels: status, enable, credentials (admins), and linking your chat accounts. */
export function ChannelsPage({ isAdmin, onOpenSidebar }: Props) {
  const { fetch } = useGateway();
  const live = useResource(loadLive, "the channels", { poll: LIVE_POLL });
  const settings = useResource(loadSettings, "the channel settings", { enabled: isAdmin });
  const { error, setError, act, reload: refresh } = live;
  const statuses = live.data?.statuses ?? null;
  const connections = live.data?.connections ?? null;
  const config = settings.data ?? null;
  const [codes, setCodes] = useState<Record<string, IssuedCode>>({});
  const [editing, setEditing] = useState<Editing | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);

  const sectionOf = (name: string) => config?.channels.find((c) => c.name === name);
  const statusOf = (name: string) => statuses?.find((s) => s.name === name);
  const names = config ? config.channels.map((c) => c.name) : (statuses ?? []).map((s) => s.name);
  const writable = config?.writable === true;

  const store = async (name: string, section: Record<string, unknown>): Promise<boolean> => {
    setBusy(name);
    setError(null);
    const ok = await act(`save ${platformLabel(name)}`, async () => {
      settings.setData(await saveChannelConfig(fetch, name, section));
      refresh();
    });
    setBusy(null);
    return ok;
  };

  const toggle = async (section: ChannelSection, enabled: boolean) => {
    await store(section.name, { ...section.config, enabled });
  };

  const openEditor = (section: ChannelSection) => {
    const fields = formFields(section);
    const enabled = section.configured ? section.config.enabled !== false : true;
    setEditing({ name: section.name, fields, draft: toDraft(section, fields), enabled });
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    const section = editing ? sectionOf(editing.name) : undefined;
    if (!editing || !section || busy) return;
    let body: Record<string, unknown>;
    try {
      body = fromDraft(section, editing.fields, editing.draft, editing.enabled);
    } catch (err) {
      setError(describeError(err));
      return;
    }
    if (await store(section.name, body)) setEditing(null);
  };

  const restart = async (name: string) => {
    setBusy(name);
    setError(null);
    await act(`restart ${platformLabel(name)}`, async () => {
      await restartChannel(fetch, name);
      refresh();
    });
    setBusy(null);
  };

  const connect = async (name: string) => {
    setError(null);
    await act("get a connect code", async () => {
      const code = await requestConnectCode(fetch, name);
      const known = (connections ?? []).map((c) => c.id);
      setCodes((c) => ({ ...c, [name]: { ...code, known } }));
    });
  };

  const revoke = async (id: string) => {
    setConfirming(null);
    await act("revoke", async () => {
      await revokeConnection(fetch, id);
      live.setData((d) => (d ? { ...d, connections: d.connections.filter((c) => c.id !== id) } : d));
      refresh();
    });
  };

  const setDraft = (key: string, value: string | boolean) =>
    setEditing((ed) => (ed ? { ...ed, draft: { ...ed.draft, [key]: value } } : ed));

  const editedSection = editing ? sectionOf(editing.name) : undefined;

  const renderField = (f: FormField, section: ChannelSection) => {
    const value = editing?.draft[f.key];
    const id = `channel-${section.name}-${f.key}`;
    if (f.kind === "boolean") {
      return (
        <label key={f.key} className="mcp-toggle" title={f.description}>
          <input id={id} type="checkbox" checked={value === true} onChange={(e) => setDraft(f.key, e.target.checked)} />
          {f.label}
        </label>
      );
    }
    const stored = f.kind === "secret" && isStored(section, f.key);
    return (
      <label key={f.key} className="field" htmlFor={id}>
        <span>
          {f.label}
          {f.required && !stored ? "" : <em> (optional)</em>}
        </span>
        <input
          id={id}
          type={f.kind === "secret" ? "password" : "text"}
          inputMode={f.kind === "number" ? "decimal" : f.kind === "integer" ? "numeric" : undefined}
          autoComplete={f.kind === "secret" ? "new-password" : "off"}
          value={typeof value === "string" ? value : ""}
          placeholder={
            stored
              ? `${MASK} stored — type to replace`
              : f.kind === "list"
                ? "comma-separated; empty: none"
                : f.defaultValue != null
                  ? String(f.defaultValue)
                  : ""
          }
          required={f.required && !stored}
          onChange={(e) => setDraft(f.key, e.target.value)}
        />
        {f.description && <small className="field-hint">{withCode(f.description)}</small>}
      </label>
    );
  };

  return (
    <SettingsLayout
      title="Channels"
      onOpenSidebar={onOpenSidebar}
      intro={
        <>
          Chat with the agent from Telegram, Slack and other chat apps. Link your chat account to your user here, so the bot
          answers as you, with your conversations and files.
          {isAdmin && (
            <>
              {" "}
              Settings are written to <code>{config?.source_path ?? "config.yaml"}</code>; secrets show as <code>{MASK}</code>{" "}
              and stay unchanged unless you type a new one.
            </>
          )}
        </>
      }
    >
      {error && <ErrorNotice message={error} onDismiss={() => setError(null)} />}
      {settings.error && <ErrorNotice message={settings.error} onDismiss={() => settings.setError(null)} />}
      {isAdmin && config && !config.writable && (
        <p className="warn-text">This gateway runs without a config file: start it with --config to change channels here.</p>
      )}

      <section className="settings-card" aria-labelledby="channels-list-title">
        <h2 id="channels-list-title">Chat platforms</h2>
        {statuses === null && !error && <p className="settings-note">Loading…</p>}
        {statuses !== null && names.length === 0 && <p className="settings-note">No channels are configured on this gateway.</p>}
        {names.map((name) => {
          const section = sectionOf(name);
          const status = statusOf(name);
          const state = stateOf(section, status);
          const code = codes[name];
          // a connection that appeared while the code was shown: the code was used
          const used = code && connections?.find((x) => x.channel === name && !code.known.includes(x.id));
          const c = status?.counts;
          const enabled = section ? section.configured && section.config.enabled !== false : status?.enabled === true;
          return (
            <article key={name} className="mcp-server" data-testid="channel" data-name={name} aria-label={`Channel ${platformLabel(name)}`}>
              <div className="mcp-server-head">
                <strong>{platformLabel(name)}</strong>
                <span className={STATE_CLASS[state]} data-testid="channel-state" title={STATE_TITLE[state]}>
                  {state}
                </span>
                {section?.configured && writable && (
                  <label className="mcp-toggle">
                    <input
                      type="checkbox"
                      checked={enabled}
                      disabled={busy === name}
                      onChange={(e) => void toggle(section, e.target.checked)}
                      aria-label={`Enable ${platformLabel(name)}`}
                    />
                    Enabled
                  </label>
                )}
                <span className="row-actions">
                  {section && writable && (
                    <button type="button" className="chip-button" onClick={() => openEditor(section)}>
                      {section.configured ? "Settings" : "Set up"}
                    </button>
                  )}
                  {isAdmin && status?.enabled && (
                    <button type="button" className="chip-button" disabled={busy === name} onClick={() => void restart(name)}>
                      Restart
                    </button>
                  )}
                  {status?.enabled && (
                    <button type="button" className="chip-button" onClick={() => void connect(name)}>
                      Connect my account
                    </button>
                  )}
                </span>
              </div>
              {status?.last_error && (
                <p className="error-text" data-testid="channel-error">
                  {status.last_error}
                </p>
              )}
              {c && (
                <p className="settings-note" data-testid="channel-counts">
                  {c.received} received · {c.replied} replied · {c.refused} refused · {c.errors} errors
                  {c.dropped_busy ? ` · ${c.dropped_busy} turned away (busy)` : ""}
                </p>
              )}
              {used && (
                <p className="ok-text" role="status" data-testid="connected-note">
                  Connected as {used.external_name || used.external_id}: the bot now answers you as your Pronghorn user.
                </p>
              )}
              {code && !used && (
                <div className="channel-code key-reveal" data-testid="connect-code" role="status">
                  <p>
                    Send this message to the {platformLabel(name)} bot within {minutesUntil(code.expires_at)} minutes; it works
                    once.
                  </p>
                  <div className="key-value">
                    <code data-testid="connect-command">{code.command}</code>
                    <CopyButton text={code.command} />
                  </div>
                  {code.deep_link && (
                    <p>
                      Or open{" "}
                      <a href={code.deep_link} target="_blank" rel="noreferrer" data-testid="connect-link">
                        {code.deep_link}
                      </a>{" "}
                      and press Start.
                    </p>
                  )}
                  <div className="form-actions">
                    <button type="button" className="chip-button" onClick={() => setCodes(({ [name]: _, ...rest }) => rest)}>
                      Done
                    </button>
                  </div>
                </div>
              )}
            </article>
          );
        })}
      </section>

      {editing && editedSection && (
        <section className="settings-card" aria-labelledby="channel-form-title">
          <h2 id="channel-form-title">
            {editedSection.configured ? "" : "Set up "}
            {platformLabel(editing.name)}
            {editedSection.configured ? " settings" : ""}
          </h2>
          {sectionSchema(editedSection).description && <p className="settings-note">{withCode(sectionSchema(editedSection).description ?? "")}</p>}
          <form className="stack-form" onSubmit={(e) => void save(e)} aria-label={`${platformLabel(editing.name)} settings`}>
            <label className="mcp-toggle">
              <input
                type="checkbox"
                checked={editing.enabled}
                onChange={(e) => setEditing({ ...editing, enabled: e.target.checked })}
              />
              Enabled
            </label>
            {editing.fields.filter((f) => !f.advanced).map((f) => renderField(f, editedSection))}
            <details className="channel-advanced">
              <summary>More settings</summary>
              <div className="stack-form">{editing.fields.filter((f) => f.advanced).map((f) => renderField(f, editedSection))}</div>
            </details>
            <div className="form-actions">
              <button type="button" className="chip-button" onClick={() => setEditing(null)}>
                Cancel
              </button>
              <button type="submit" className="primary" disabled={busy !== null}>
                {busy === editing.name ? "Saving…" : "Save"}
              </button>
            </div>
          </form>
        </section>
      )}

      <section className="settings-card" aria-labelledby="connections-title">
        <h2 id="connections-title">Your connected accounts</h2>
        {connections === null && !error && <p className="settings-note">Loading…</p>}
        {connections?.length === 0 && (
          <p className="settings-note">None yet. Use “Connect my account” above, then send the message it shows to the bot.</p>
        )}
        {connections && connections.length > 0 && (
          <div className="table-wrap">
            <table className="settings-table" data-testid="connections">
              <thead>
                <tr>
                  <th scope="col">Platform</th>
                  <th scope="col">Account</th>
                  <th scope="col">Connected</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {connections.map((c) => (
                  <tr key={c.id} data-testid="connection">
                    <td>{platformLabel(c.channel)}</td>
                    <td>{c.external_name ? `${c.external_name} (${c.external_id})` : c.external_id}</td>
                    <td>{new Date(c.created_at).toLocaleString()}</td>
                    <td className="row-actions">
                      {confirming === c.id ? (
                        <>
                          <button type="button" className="chip-button danger" onClick={() => void revoke(c.id)}>
                            Revoke
                          </button>
                          <button type="button" className="chip-button" onClick={() => setConfirming(null)}>
                            Cancel
                          </button>
                        </>
                      ) : (
                        <button
                          type="button"
                          className="chip-button"
                          aria-label={`Revoke ${platformLabel(c.channel)} ${c.external_name || c.external_id}`}
                          onClick={() => setConfirming(c.id)}
                        >
                          Revoke…
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </SettingsLayout>
  );
}
