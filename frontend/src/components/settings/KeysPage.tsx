import { useState, type FormEvent } from "react";
import { createKey, listKeys, revokeKey, type NewApiKey } from "../../api/auth";
import { useGateway } from "../../api/gateway";
import { useResource } from "../../hooks/useResource";
import { formatWhen } from "../../lib/format";
import { ErrorNotice } from "../ErrorNotice";
import { CopyButton } from "./CopyButton";
import { SettingsLayout } from "./SettingsLayout";

const EXPIRY: { label: string; days: number | null }[] = [
  { label: "Never", days: null },
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
  { label: "1 year", days: 365 },
];

interface Props {
  onOpenSidebar: () => void;
}

/** The signed-in user's API keys: create (the secret shown once), list, revoke. */
export function KeysPage({ onOpenSidebar }: Props) {
  const { fetch } = useGateway();
  const { data: keys, setData: setKeys, error, setError, reload: refresh, act } = useResource(listKeys, "keys");
  const [name, setName] = useState("");
  const [expiry, setExpiry] = useState("");
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<NewApiKey | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (busy || !name.trim()) return;
    setBusy(true);
    setError(null);
    await act("create the key", async () => {
      const key = await createKey(fetch, name.trim(), expiry ? Number(expiry) : null);
      setCreated(key);
      setName("");
      setExpiry("");
      refresh();
    });
    setBusy(false);
  };

  const revoke = async (id: string) => {
    setConfirming(null);
    await act("revoke the key", async () => {
      await revokeKey(fetch, id);
      setKeys((prev) => prev?.filter((k) => k.id !== id) ?? null);
      if (created?.id === id) setCreated(null);
    });
  };

  return (
    <SettingsLayout
      title="API keys"
      onOpenSidebar={onOpenSidebar}
      intro={
        <>
          A key lets a script or the LangGraph SDK act as you: <code>get_client(url=…, api_key=…)</code>. It is shown once
          when you create it; revoke it here when you no longer need it.
        </>
      }
    >
      {error && <ErrorNotice message={error} onDismiss={() => setError(null)} />}

      {created && (
        <section className="settings-card key-reveal" aria-label="New API key">
          <h2>Key “{created.name}” created</h2>
          <p className="warn-text">Copy this key now. You will not be able to see it again.</p>
          <div className="key-value">
            <code data-testid="new-api-key">{created.key}</code>
            <CopyButton text={created.key} />
          </div>
          <div className="form-actions">
            <button type="button" className="chip-button" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </section>
      )}

      <section className="settings-card" aria-labelledby="new-key-title">
        <h2 id="new-key-title">Create a key</h2>
        <form className="inline-form" onSubmit={(e) => void create(e)}>
          <label className="field grow">
            <span>Name</span>
            <input value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. laptop script" maxLength={100} required />
          </label>
          <label className="field">
            <span>Expires</span>
            <select value={expiry} onChange={(e) => setExpiry(e.target.value)}>
              {EXPIRY.map((o) => (
                <option key={o.label} value={o.days ?? ""}>
                  {o.label}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" className="primary" disabled={busy || !name.trim()}>
            {busy ? "Creating…" : "Create key"}
          </button>
        </form>
      </section>

      <section className="settings-card" aria-labelledby="keys-title">
        <h2 id="keys-title">Your keys</h2>
        {keys === null && !error && <p className="settings-note">Loading…</p>}
        {keys?.length === 0 && <p className="settings-note">No API keys yet.</p>}
        {keys && keys.length > 0 && (
          <div className="table-wrap">
            <table className="settings-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {keys.map((k) => (
                  <tr key={k.id} data-testid="api-key-row">
                    <td>{k.name}</td>
                    <td><code>{k.prefix}…</code></td>
                    <td>{formatWhen(k.created_at)}</td>
                    <td>{formatWhen(k.last_used_at, "Never")}</td>
                    <td>{formatWhen(k.expires_at, "Never")}</td>
                    <td className="row-actions">
                      {confirming === k.id ? (
                        <>
                          <button type="button" className="chip-button danger" onClick={() => void revoke(k.id)}>
                            Revoke
                          </button>
                          <button type="button" className="chip-button" onClick={() => setConfirming(null)}>
                            Cancel
                          </button>
                        </>
                      ) : (
                        <button type="button" className="chip-button" aria-label={`Revoke ${k.name}`} onClick={() => setConfirming(k.id)}>
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
