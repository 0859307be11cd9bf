import { useEffect, useState, type FormEvent } from "react";
import { login, oidcLoginUrl, type AuthConfig, type SessionBody } from "../../api/auth";
import type { Fetch } from "../../api/http";
import { loginFailure } from "../../lib/loginErrors";
import { AuthCard } from "./AuthCard";

interface Props {
  fetch: Fetch;
  oidc: AuthConfig["oidc"];
  /** Where to go after signing in. */
  next: string;
  /** An error passed back in the URL (e.g. a failed SSO sign-in). */
  initialError: string | null;
  /** Why the user is here (e.g. after a password change). */
  notice: string | null;
  onDone: (session: SessionBody) => void;
}

export function LoginPage({ fetch, oidc, next, initialError, notice, onDone }: Props) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(initialError);
  const [waitUntil, setWaitUntil] = useState(0);
  const [now, setNow] = useState(() => Date.now());

  const waiting = waitUntil > now;
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [waiting]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy || waiting) return;
    setBusy(true);
    setError(null);
    try {
      onDone(await login(fetch, username.trim(), password));
    } catch (err) {
      const { message, waitSeconds } = loginFailure(err);
      setError(message);
      setPassword("");
      if (waitSeconds > 0) {
        const start = Date.now();
        setNow(start);
        setWaitUntil(start + waitSeconds * 1000);
      }
    } finally {
      setBusy(false);
    }
  };

  const secondsLeft = Math.ceil((waitUntil - now) / 1000);
  return (
    <AuthCard title="Sign in" subtitle="Sign in to continue to your chats.">
      {oidc && (
        <>
          <a className="sso-button" href={oidcLoginUrl(next)}>
            Sign in with {oidc.label}
          </a>
          <div className="auth-divider" aria-hidden="true"><span>or</span></div>
        </>
      )}
      {notice && (
        <p className="ok-note" role="status">
          {notice}
        </p>
      )}
      <form className="auth-form" onSubmit={(e) => void submit(e)} aria-label="Sign in">
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
            autoFocus
          />
        </label>
        <label className="field">
          <span>Password</span>
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
          />
        </label>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary auth-submit" disabled={busy || waiting || !username.trim() || !password}>
          {busy ? "Signing in…" : waiting ? `Wait ${secondsLeft} s` : "Sign in"}
        </button>
      </form>
    </AuthCard>
  );
}
