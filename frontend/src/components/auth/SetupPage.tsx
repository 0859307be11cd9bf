import { useState, type FormEvent } from "react";
import { setup, type SessionBody } from "../../api/auth";
import type { Fetch } from "../../api/http";
import { setupFailure } from "../../lib/loginErrors";
import { AuthCard } from "./AuthCard";

interface Props {
  fetch: Fetch;
  /** The token from the setup link (`/setup?token=...`), or "" when opened without one. */
  initialToken: string;
  onDone: (session: SessionBody) => void;
}

/** First run: create the admin account with the one-time token the server printed. */
export function SetupPage({ fetch, initialToken, onDone }: Props) {
  const [token, setToken] = useState(initialToken);
  const [username, setUsername] = useState("admin");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const mismatch = confirm.length > 0 && confirm !== password;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    if (password !== confirm) {
      setError("The passwords do not match.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const name = displayName.trim();
      onDone(await setup(fetch, { token: token.trim(), username: username.trim(), password, ...(name ? { display_name: name } : {}) }));
    } catch (err) {
      setError(setupFailure(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <AuthCard
      title="Create the admin account"
      subtitle="This gateway has no users yet. The first account is its administrator: it can add other users later."
    >
      <form className="auth-form" onSubmit={(e) => void submit(e)} aria-label="Create the admin account">
        {initialToken ? (
          <p className="auth-note">Using the token from your setup link. Choose the administrator&apos;s name and password.</p>
        ) : (
          <label className="field">
            <span>Setup token</span>
            <input
              name="token"
              autoComplete="off"
              spellCheck={false}
              value={token}
              onChange={(e) => setToken(e.target.value)}
              required
            />
            <small className="field-hint">
              Printed by the server when it started with no users, and saved in &lt;data_dir&gt;/setup-token.
            </small>
          </label>
        )}
        <label className="field">
          <span>Username</span>
          <input
            name="username"
            autoComplete="username"
            autoCapitalize="none"
            spellCheck={false}
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            required
          />
        </label>
        <label className="field">
          <span>Display name <em>(optional)</em></span>
          <input name="display_name" autoComplete="name" value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
        </label>
        <label className="field">
          <span>Password</span>
          <input
            name="password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
          />
        </label>
        <label className="field">
          <span>Confirm password</span>
          <input
            name="confirm"
            type="password"
            autoComplete="new-password"
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
            aria-invalid={mismatch || undefined}
            required
          />
          {mismatch && <small className="field-hint error-text">The passwords do not match.</small>}
        </label>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <button
          type="submit"
          className="primary auth-submit"
          disabled={busy || !token.trim() || !username.trim() || !password || mismatch}
        >
          {busy ? "Creating…" : "Create admin account"}
        </button>
      </form>
    </AuthCard>
  );
}
