import { useState, type FormEvent } from "react";
import { changePassword } from "../../api/auth";
import { useGateway } from "../../api/gateway";
import { passwordChangeFailure } from "../../lib/loginErrors";
import { SettingsLayout } from "./SettingsLayout";

interface Props {
  onOpenSidebar: () => void;
  /** After a change: the server may have ended the other sessions, or this one. */
  onChanged: (notice: string) => void;
}

export function PasswordPage({ onOpenSidebar, onChanged }: Props) {
  const { fetch } = useGateway();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [confirm, setConfirm] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const mismatch = confirm.length > 0 && confirm !== next;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    if (next !== confirm) {
      setError("The new passwords do not match.");
      return;
    }
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      await changePassword(fetch, current, next);
      setCurrent("");
      setNext("");
      setConfirm("");
      setDone(true);
      onChanged("Password changed. Sign in with your new password.");
    } catch (err) {
      setError(passwordChangeFailure(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <SettingsLayout
      title="Change password"
      onOpenSidebar={onOpenSidebar}
      intro="Changing your password ends all your sessions, this one included: you sign in again with the new password."
    >
      <section className="settings-card">
        <form className="auth-form narrow" onSubmit={(e) => void submit(e)} aria-label="Change password">
          <label className="field">
            <span>Current password</span>
            <input type="password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} required />
          </label>
          <label className="field">
            <span>New password</span>
            <input type="password" autoComplete="new-password" value={next} onChange={(e) => setNext(e.target.value)} required />
          </label>
          <label className="field">
            <span>Confirm new password</span>
            <input
              type="password"
              autoComplete="new-password"
              value={confirm}
              onChange={(e) => setConfirm(e.target.value)}
              aria-invalid={mismatch || undefined}
              required
            />
            {mismatch && <small className="field-hint error-text">The passwords do not match.</small>}
          </label>
          {error && <p className="form-error" role="alert">{error}</p>}
          {done && <p className="ok-note" role="status">Password changed.</p>}
          <div className="form-actions">
            <button type="submit" className="primary" disabled={busy || !current || !next || mismatch}>
              {busy ? "Saving…" : "Change password"}
            </button>
          </div>
        </form>
      </section>
    </SettingsLayout>
  );
}
