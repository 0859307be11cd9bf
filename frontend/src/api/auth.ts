/** The gateway's identity API under /api/auth (accounts, sessions, API keys, users). */

import { errorFrom, HttpError, type Fetch } from "./http";
import type { Schema } from "./types";

export type AuthConfig = Schema<"AuthConfig">;
export type AuthMode = AuthConfig["mode"];
export type User = Schema<"AuthUser">;
export type Role = User["role"];
export type SessionBody = Schema<"Session">;
export type ApiKey = Schema<"ApiKeyRecord">;
/** A key just created: the only time its secret is shown. */
export type NewApiKey = Schema<"ApiKeyCreated">;
export type NewUser = Schema<"UserCreate">;
export type UserPatch = Schema<"UserPatch">;
export type UserRemoved = Schema<"UserRemoved">;

/** The sign-in URL of the configured OpenID Connect provider (a full-page navigation). */
export function oidcLoginUrl(next: string): string {
  return `/api/auth/oidc/login?next=${encodeURIComponent(next)}`;
}

async function call<T>(fetch: Fetch, method: string, url: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers = { Accept: "application/json", "Content-Type": "application/json" };
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  if (!response.ok) throw await errorFrom(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** How this gateway signs people in. A gateway without the endpoint (404) has no auth: mode none. */
export async function fetchAuthConfig(fetch: Fetch): Promise<AuthConfig> {
  try {
    return await call<AuthConfig>(fetch, "GET", "/api/auth/config");
  } catch (e) {
    if (e instanceof HttpError && e.status === 404) return { mode: "none", setup_required: false, oidc: null };
    throw e;
  }
}

/** The signed-in user, or null when there is no valid session (401). */
export async function fetchMe(fetch: Fetch): Promise<SessionBody | null> {
  try {
    return await call<SessionBody>(fetch, "GET", "/api/auth/me");
  } catch (e) {
    if (e instanceof HttpError && e.status === 401) return null;
    throw e;
  }
}

export function login(fetch: Fetch, username: string, password: string): Promise<SessionBody> {
  return call<SessionBody>(fetch, "POST", "/api/auth/login", { username, password } satisfies Schema<"LoginBody">);
}

export function setup(
  fetch: Fetch,
  body: Schema<"SetupBody">,
): Promise<SessionBody> {
  return call<SessionBody>(fetch, "POST", "/api/auth/setup", body);
}

export function logout(fetch: Fetch): Promise<void> {
  return call<void>(fetch, "POST", "/api/auth/logout");
}

export function changePassword(fetch: Fetch, currentPassword: string, newPassword: string): Promise<void> {
  return call<void>(fetch, "POST", "/api/auth/password", {
    current_password: currentPassword,
    new_password: newPassword,
  } satisfies Schema<"PasswordBody">);
}

export function listKeys(fetch: Fetch): Promise<ApiKey[]> {
  return call<ApiKey[]>(fetch, "GET", "/api/auth/keys");
}

export function createKey(fetch: Fetch, name: string, expiresInDays: number | null): Promise<NewApiKey> {
  return call<NewApiKey>(fetch, "POST", "/api/auth/keys", (expiresInDays ? { name, expires_in_days: expiresInDays } : { name }) satisfies Schema<"KeyCreate">);
}

export function revokeKey(fetch: Fetch, id: string): Promise<void> {
  return call<void>(fetch, "DELETE", `/api/auth/keys/${encodeURIComponent(id)}`);
}

export function listUsers(fetch: Fetch): Promise<User[]> {
  return call<User[]>(fetch, "GET", "/api/auth/users");
}

export function createUser(fetch: Fetch, body: NewUser): Promise<User> {
  return call<User>(fetch, "POST", "/api/auth/users", body);
}

export function updateUser(fetch: Fetch, id: string, patch: UserPatch): Promise<User> {
  return call<User>(fetch, "PATCH", `/api/auth/users/${encodeURIComponent(id)}`, patch);
}

/** Delete the user and everything of theirs (threads, files, memory, keys, crons). */
export function deleteUser(fetch: Fetch, id: string): Promise<UserRemoved> {
  return call<UserRemoved>(fetch, "DELETE", `/api/auth/users/${encodeURIComponent(id)}`);
}

/** The name to show for a user. */
export function displayName(user: Pick<User, "username" | "display_name">): string {
  return user.display_name?.trim() || user.username;
}
