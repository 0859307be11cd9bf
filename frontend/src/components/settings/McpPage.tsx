import { useState, type FormEvent } from "react";
import { useGateway } from "../../api/gateway";
import {
  MASK,
  fetchMcpConfig,
  fetchMcpStatus,
  formatPairs,
  parsePairs,
  saveMcpServers,
  testMcpServer,
  type McpServer,
  type McpServerStatus,
  type McpStatus,
  type McpTestResult,
  type McpType,
} from "../../api/mcp";
import { useResource, type Poll } from "../../hooks/useResource";
import { describeError } from "../../lib/errors";
import { ErrorNotice } from "../ErrorNotice";
import { SettingsLayout } from "./SettingsLayout";

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The status, again every second while a server is still connecting (at most a minute). */
const STATUS_POLL: Poll<McpStatus> = {
  every: 1000,
  until: (s) => !s.servers.some((x) => x.status === "connecting"),
  times: 60,
};

interface Draft {
  original: string | null;
  name: string;
  type: McpType;
  description: string;
  enabled: boolean;
  command: string;
  args: string;
  env: string;
  url: string;
  headers: string;
  timeout: string;
  rest: McpServer; // fields the form does not edit (oauth, startup_timeout_s) are kept
}

function toDraft(name: string | null, server: McpServer): Draft {
  const { type, description, enabled, command, args, env, url, headers, tool_call_timeout_s, ...rest } = server;
  return {
    original: name,
    name: name ?? "",
    type: type ?? "stdio",
    description: description ?? "",
    enabled: enabled ?? true,
    command: command ?? "",
    args: (args ?? []).join("\n"),
    env: formatPairs(env, "="),
    url: url ?? "",
    headers: formatPairs(headers, ":"),
    timeout: tool_call_timeout_s !== undefined ? String(tool_call_timeout_s) : "",
    rest,
  };
}

/** The server the draft describes (throws on malformed env/header lines). */
function fromDraft(d: Draft): McpServer {
  const server: McpServer = { ...d.rest, type: d.type, enabled: d.enabled };
  if (d.description.trim()) server.description = d.description.trim();
  if (d.timeout.trim()) server.tool_call_timeout_s = Number(d.timeout);
  if (d.type === "stdio") {
    server.command = d.command.trim();
    const args = d.args.split("\n").map((a) => a.trim()).filter(Boolean);
    if (args.length) server.args = args;
    const env = parsePairs(d.env, "=");
    if (Object.keys(env).length) server.env = env;
    delete server.oauth;
  } else {
    server.url = d.url.trim();
    const headers = parsePairs(d.headers, ":");
    if (Object.keys(headers).length) server.headers = headers;
  }
  return server;
}

const STATUS_CLASS: Record<McpServerStatus["status"], string> = {
  connected: "badge badge-ok",
  connecting: "badge",
  disabled: "badge",
  error: "badge badge-danger",
};

interface Props {
  onOpenSidebar: () => void;
}

/** MCP servers: their status and tools, add / edit / remove, enable, test a connection. */
export function McpPage({ onOpenSidebar }: Props) {
  const { fetch } = useGateway();
  const { data: config, setData: setConfig, error, setError, act } = useResource(fetchMcpConfig, "the MCP servers");
  const { data: status, error: statusError, setError: setStatusError, reload: refreshStatus } = useResource(
    fetchMcpStatus,
    "the server status",
    { poll: STATUS_POLL },
  );
  const [draft, setDraft] = useState<Draft | null>(null);
  const [test, setTest] = useState<McpTestResult | null>(null);
  const [busy, setBusy] = useState<"save" | "test" | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);

  const store = async (servers: Record<string, McpServer>): Promise<boolean> => {
    return act("save", async () => {
      const saved = await saveMcpServers(fetch, servers);
      setConfig(saved);
      refreshStatus();
    });
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!draft || !config || busy) return;
    const name = draft.name.trim();
    if (!NAME_RE.test(name)) {
      setError("A server name uses letters, digits, _ and - (up to 64).");
      return;
    }
    if (name !== draft.original && name in config.mcp_servers) {
      setError(`A server named ${name} already exists.`);
      return;
    }
    let server: McpServer;
    try {
      server = fromDraft(draft);
    } catch (err) {
      setError(describeError(err));
      return;
    }
    const servers: Record<string, McpServer> = {};
    for (const [key, value] of Object.entries(config.mcp_servers)) {
      if (key === draft.original) servers[name] = server;
      else servers[key] = value;
    }
    if (draft.original === null || !(draft.original in config.mcp_servers)) servers[name] = server;
    setBusy("save");
    setError(null);
    const ok = await store(servers);
    setBusy(null);
    if (ok) {
      setDraft(null);
      setTest(null);
    }
  };

  const runTest = async () => {
    if (!draft || busy) return;
    setBusy("test");
    setTest(null);
    setError(null);
    await act("test the connection", async () => {
      setTest(await testMcpServer(fetch, draft.original ?? draft.name.trim(), fromDraft(draft)));
    });
    setBusy(null);
  };

  const toggle = async (name: string, enabled: boolean) => {
    if (!config) return;
    const servers = { ...config.mcp_servers, [name]: { ...config.mcp_servers[name], enabled } };
    setConfig({ ...config, mcp_servers: servers }); // at once; put back if the save fails
    if (!(await store(servers))) setConfig(config);
  };

  const remove = async (name: string) => {
    if (!config) return;
    setConfirming(null);
    const servers = { ...config.mcp_servers };
    delete servers[name];
    await store(servers);
  };

  const statusOf = (name: string) => status?.servers.find((s) => s.name === name);
  const edit = (patch: Partial<Draft>) => setDraft((d) => (d ? { ...d, ...patch } : d));
  const names = config ? Object.keys(config.mcp_servers) : [];

  return (
    <SettingsLayout
      title="MCP servers"
      onOpenSidebar={onOpenSidebar}
      intro={
        <>
          Tools from MCP servers reach the agent as <code>&lt;server&gt;_&lt;tool&gt;</code>. Changes are written to{" "}
          <code>{config?.source_path ?? "config.yaml"}</code> and apply to the next message. Secrets show as{" "}
          <code>{MASK}</code>; leave them so to keep the stored value.
        </>
      }
    >
      {error && <ErrorNotice message={error} onDismiss={() => setError(null)} />}
      {statusError && <ErrorNotice message={statusError} onDismiss={() => setStatusError(null)} />}
      {config && !config.writable && (
        <p className="warn-text">This gateway runs without a config file: start it with --config to edit servers here.</p>
      )}

      <section className="settings-card" aria-labelledby="mcp-list-title">
        <div className="card-title-row">
          <h2 id="mcp-list-title">Servers</h2>
          {status && (
            <span className="settings-note" data-testid="mcp-tool-count">
              {status.tool_count} tools{status.deferred ? " (behind tool_search)" : ""}
            </span>
          )}
        </div>
        {config === null && !error && <p className="settings-note">Loading…</p>}
        {config && names.length === 0 && <p className="settings-note">No MCP servers yet.</p>}
        {names.map((name) => {
          const server = config?.mcp_servers[name] ?? {};
          const st = statusOf(name);
          const enabled = server.enabled ?? true;
          return (
            <article key={name} className="mcp-server" data-testid="mcp-server" data-name={name} aria-label={`MCP server ${name}`}>
              <div className="mcp-server-head">
                <strong>{name}</strong>
                <span className="badge">{server.type ?? "stdio"}</span>
                <span className={STATUS_CLASS[st?.status ?? "connecting"]} data-testid="mcp-status">
                  {st?.status ?? "connecting"}
                </span>
                <label className="mcp-toggle">
                  <input
                    type="checkbox"
                    checked={enabled}
                    onChange={(e) => void toggle(name, e.target.checked)}
                    aria-label={`Enable ${name}`}
                  />
                  Enabled
                </label>
                <span className="row-actions">
                  <button type="button" className="chip-button" onClick={() => { setDraft(toDraft(name, server)); setTest(null); }}>
                    Edit
                  </button>
                  {confirming === name ? (
                    <>
                      <button type="button" className="chip-button danger" onClick={() => void remove(name)}>
                        Remove
                      </button>
                      <button type="button" className="chip-button" onClick={() => setConfirming(null)}>
                        Cancel
                      </button>
                    </>
                  ) : (
                    <button type="button" className="chip-button" aria-label={`Remove ${name}`} onClick={() => setConfirming(name)}>
                      Remove…
                    </button>
                  )}
                </span>
              </div>
              {server.description && <p className="settings-note">{server.description}</p>}
              {st?.last_error && (
                <p className="error-text" data-testid="mcp-error">
                  {st.last_error}
                </p>
              )}
              {st && st.tools.length > 0 && (
                <p className="mcp-tools" data-testid="mcp-tools">
                  {st.tools.map((t) => (
                    <code key={t.name} title={t.description ?? undefined}>
                      {t.name}
                    </code>
                  ))}
                </p>
              )}
            </article>
          );
        })}
        {!draft && config?.writable && (
          <div className="form-actions">
            <button type="button" className="primary" onClick={() => { setDraft(toDraft(null, {})); setTest(null); }}>
              Add server
            </button>
          </div>
        )}
      </section>

      {draft && (
        <section className="settings-card" aria-labelledby="mcp-form-title">
          <h2 id="mcp-form-title">{draft.original ? `Edit ${draft.original}` : "Add a server"}</h2>
          <form className="stack-form" onSubmit={(e) => void save(e)}>
            <label className="field">
              <span>Name</span>
              <input value={draft.name} onChange={(e) => edit({ name: e.target.value })} placeholder="e.g. github" required />
            </label>
            <label className="field">
              <span>Transport</span>
              <select value={draft.type} onChange={(e) => edit({ type: e.target.value as McpType })}>
                <option value="stdio">stdio (a local command)</option>
                <option value="http">http (streamable HTTP)</option>
                <option value="sse">sse</option>
              </select>
            </label>
            <label className="field">
              <span>Description</span>
              <input value={draft.description} onChange={(e) => edit({ description: e.target.value })} />
            </label>
            {draft.type === "stdio" ? (
              <>
                <label className="field">
                  <span>Command</span>
                  <input value={draft.command} onChange={(e) => edit({ command: e.target.value })} placeholder="npx" required />
                </label>
                <label className="field">
                  <span>Arguments (one per line)</span>
                  <textarea rows={3} value={draft.args} onChange={(e) => edit({ args: e.target.value })} />
                </label>
                <label className="field">
                  <span>Environment (KEY=value, one per line; use ${"{VAR}"})</span>
                  <textarea rows={3} value={draft.env} onChange={(e) => edit({ env: e.target.value })} />
                </label>
              </>
            ) : (
              <>
                <label className="field">
                  <span>URL</span>
                  <input value={draft.url} onChange={(e) => edit({ url: e.target.value })} placeholder="https://…/mcp" required />
                </label>
                <label className="field">
                  <span>Headers (Name: value, one per line)</span>
                  <textarea rows={3} value={draft.headers} onChange={(e) => edit({ headers: e.target.value })} />
                </label>
              </>
            )}
            <label className="field">
              <span>Tool call timeout (seconds)</span>
              <input inputMode="decimal" value={draft.timeout} onChange={(e) => edit({ timeout: e.target.value })} placeholder="60" />
            </label>
            {test && (
              <p className={test.ok ? "ok-text" : "error-text"} data-testid="mcp-test-result" role="status">
                {test.ok
                  ? `Connected in ${test.elapsed_ms} ms: ${test.tools.length} tools (${test.tools.map((t) => t.name).join(", ")})`
                  : `Failed: ${test.error ?? "unknown error"}`}
              </p>
            )}
            <div className="form-actions">
              <button type="button" className="chip-button" onClick={() => void runTest()} disabled={busy !== null}>
                {busy === "test" ? "Testing…" : "Test connection"}
              </button>
              <button type="button" className="chip-button" onClick={() => { setDraft(null); setTest(null); }}>
                Cancel
              </button>
              <button type="submit" className="primary" disabled={busy !== null}>
                {busy === "save" ? "Saving…" : "Save"}
              </button>
            </div>
          </form>
        </section>
      )}
    </SettingsLayout>
  );
}
