import type { AuthConfig, AuthMode, User } from "../api/auth";

/** Who is using the UI: a signed-in user, or the single local user of `auth.mode: none`. */
export interface Session {
  mode: AuthMode;
  /** null in mode none (there are no accounts). */
  user: User | null;
  csrfToken: string | null;
  oidc: AuthConfig["oidc"];
}

/** What the auth gate shows for a loaded config and (maybe) a session. */
export type GateView = "app" | "login" | "setup" | "custom-signin";

export function gateView(config: AuthConfig, session: Session | null): GateView {
  if (config.mode === "none" || session) return "app";
  if (config.setup_required) return "setup";
  if (config.mode === "custom") return "custom-signin";
  return "login";
}

/**
 * The mutable part of a session that requests read at send time: the CSRF token, and whether
 * a reload of the session is already under way (many 401s at once cause one reload).
 * One per auth gate, handed to the fetch it builds.
 */
export class SessionKeeper {
  #csrf: string | null = null;
  #loading = false;

  csrfToken(): string | null {
    return this.#csrf;
  }

  setCsrfToken(token: string | null): void {
    this.#csrf = token;
  }

  /** True when the caller may start a reload (none is running); call `endLoad` after. */
  beginLoad(): boolean {
    if (this.#loading) return false;
    this.#loading = true;
    return true;
  }

  endLoad(): void {
    this.#loading = false;
  }
}
