import { useCallback, useEffect, useMemo, useState, type ReactNode } from "react";
import { fetchAuthConfig, fetchMe, type AuthConfig, type SessionBody } from "../../api/auth";
import { createClient } from "../../api/client";
import { GatewayContext, type Gateway } from "../../api/gateway";
import { createAuthFetch, type Fetch } from "../../api/http";
import type { Go } from "../../hooks/useRoute";
import { describeError } from "../../lib/errors";
import { parseRoute, safeNext, type Route } from "../../lib/route";
import { gateView, SessionKeeper, type Session } from "../../lib/session";
import { AuthCard } from "./AuthCard";
import { LoginPage } from "./LoginPage";
import { SetupPage } from "./SetupPage";

type Phase =
  | { kind: "loading" }
  | { kind: "failed"; message: string }
  | { kind: "ready"; config: AuthConfig; session: Session | null };

export interface SessionActions {
  /** Forget the session here (after the server ended it) and show the login page. */
  signedOut: () => void;
  /** Re-read the config and the session (after a change that may have ended it); a notice
   * is shown on the login page if it did. */
  reload: (notice?: string) => void;
}

interface Props {
  route: Route;
  go: Go;
  children: (session: Session, actions: SessionActions) => ReactNode;
}

const plainFetch: Fetch = (input, init) => fetch(input, { credentials: "same-origin", ...init });

const here = () => `${window.location.pathname}${window.location.search}`;

/**
 * Decides what the UI shows: setup, login, or the app for a session. It owns the session's
 * fetch (CSRF header, 401 → sign in again, back to the same page afterwards) and SDK client.
 */
export function AuthGate({ route, go, children }: Props) {
  const [phase, setPhase] = useState<Phase>({ kind: "loading" });
  const [keeper] = useState(() => new SessionKeeper());
  const [notice, setNotice] = useState<string | null>(null);

  const load = useCallback(() => {
    if (!keeper.beginLoad()) return;
    fetchAuthConfig(plainFetch)
      .then(async (config): Promise<Phase> => {
        if (config.mode === "none") {
          return { kind: "ready", config, session: { mode: "none", user: null, csrfToken: null, oidc: null } };
        }
        const me = await fetchMe(plainFetch);
        const session = me ? { mode: config.mode, user: me.user, csrfToken: me.csrf_token, oidc: config.oidc } : null;
        return { kind: "ready", config, session };
      })
      .then((next) => {
        keeper.setCsrfToken(next.kind === "ready" ? (next.session?.csrfToken ?? null) : null);
        setPhase(next);
      })
      .catch((e: unknown) => setPhase({ kind: "failed", message: describeError(e) }))
      .finally(() => keeper.endLoad());
  }, [keeper]);

  useEffect(() => {
    load();
  }, [load]);

  const gateway = useMemo<Gateway>(() => {
    const authFetch = createAuthFetch({ csrfToken: () => keeper.csrfToken(), onUnauthorized: load });
    return { fetch: authFetch, client: createClient(authFetch) };
  }, [keeper, load]);

  const signedIn = useCallback(
    (config: AuthConfig, body: SessionBody, next: string) => {
      keeper.setCsrfToken(body.csrf_token);
      setNotice(null);
      setPhase({ kind: "ready", config, session: { mode: config.mode, user: body.user, csrfToken: body.csrf_token, oidc: config.oidc } });
      const target = safeNext(next);
      const url = new URL(target, window.location.origin);
      go(parseRoute(url.pathname, url.search), { replace: true });
    },
    [go, keeper],
  );

  const actions = useMemo<SessionActions>(
    () => ({
      signedOut: () => {
        keeper.setCsrfToken(null);
        go({ page: "login", next: "/", error: null }, { replace: false });
        setPhase((p) => (p.kind === "ready" ? { ...p, session: null } : p));
      },
      reload: (message?: string) => {
        setNotice(message ?? null);
        load();
      },
    }),
    [go, keeper, load],
  );

  const view = phase.kind === "ready" ? gateView(phase.config, phase.session) : null;

  // Keep the address bar honest: the login page carries where to come back to; a session leaves /login and /setup.
  useEffect(() => {
    if (view === "login" && route.page !== "login") {
      go({ page: "login", next: safeNext(here()), error: null }, { replace: true });
    } else if (view === "app" && (route.page === "login" || route.page === "setup")) {
      const url = new URL(route.page === "login" ? route.next : "/", window.location.origin);
      go(parseRoute(url.pathname, url.search), { replace: true });
    }
  }, [view, route, go]);

  if (phase.kind === "loading") {
    return (
      <AuthCard title="Pronghorn">
        <p className="auth-note" role="status">Loading…</p>
      </AuthCard>
    );
  }
  if (phase.kind === "failed") {
    return (
      <AuthCard title="Cannot reach the gateway">
        <p className="auth-note error-text" role="alert">{phase.message}</p>
        <button type="button" className="primary auth-submit" onClick={load}>
          Try again
        </button>
      </AuthCard>
    );
  }

  const { config, session } = phase;
  if (view === "app" && session) {
    return <GatewayContext.Provider value={gateway}>{children(session, actions)}</GatewayContext.Provider>;
  }
  if (view === "setup") {
    return (
      <SetupPage
        fetch={plainFetch}
        initialToken={route.page === "setup" ? route.token : ""}
        onDone={(body) => signedIn({ ...config, setup_required: false }, body, "/")}
      />
    );
  }
  if (view === "custom-signin") {
    return (
      <AuthCard title="Sign in required">
        <p className="auth-note">
          This gateway uses custom authentication. Sign in through your organisation&apos;s login, or call the API with
          the credentials your administrator gave you.
        </p>
        <button type="button" className="primary auth-submit" onClick={load}>
          Try again
        </button>
      </AuthCard>
    );
  }
  const next = route.page === "login" ? route.next : safeNext(here());
  return (
    <LoginPage
      fetch={plainFetch}
      oidc={config.oidc}
      next={next}
      initialError={route.page === "login" ? route.error : null}
      notice={notice}
      onDone={(body) => signedIn(config, body, next)}
    />
  );
}
