/** The one fetch every gateway request goes through: CSRF header on writes, 401 → sign in again. */

export type Fetch = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

export const CSRF_HEADER = "X-CSRF-Token";

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Endpoints whose 401 is an answer to a form (wrong password), not a lost session.
 * Matched against the URL path.
 */
const FORM_ENDPOINTS = ["/api/auth/login", "/api/auth/setup", "/api/auth/password", "/api/auth/me", "/api/auth/config"];

export class HttpError extends Error {
  readonly status: number;
  /** Seconds from a Retry-After header (429/503), when the server sent one. */
  readonly retryAfter: number | null;
  constructor(status: number, message: string, retryAfter: number | null = null) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** Seconds to wait from a Retry-After value (delta-seconds or an HTTP date). */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** An HttpError carrying the body's `detail` (or message/error) and Retry-After. */
export async function errorFrom(response: Response): Promise<HttpError> {
  let detail = response.statusText || `HTTP ${response.status}`;
  try {
    const body: unknown = await response.json();
    if (body && typeof body === "object") {
      const b = body as Record<string, unknown>;
      const d = b.detail ?? b.message ?? b.error;
      if (typeof d === "string") detail = d;
      else if (d !== undefined) detail = JSON.stringify(d);
    }
  } catch {
    /* not JSON */
  }
  if (response.status === 413 && !/limit|large/i.test(detail)) detail = `Too large: ${detail}`;
  return new HttpError(response.status, detail, parseRetryAfter(response.headers.get("Retry-After")));
}

export function isMutating(method: string | undefined): boolean {
  return MUTATING.has((method ?? "GET").toUpperCase());
}

function methodOf(input: RequestInfo | URL, init?: RequestInit): string {
  if (init?.method) return init.method;
  if (typeof Request !== "undefined" && input instanceof Request) return input.method;
  return "GET";
}

function pathOf(input: RequestInfo | URL, base: string): string {
  const raw = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  try {
    return new URL(raw, base).pathname;
  } catch {
    return raw;
  }
}

/** True when a 401 from `path` means the session is gone (and not a form's wrong-password answer). */
export function isSessionLoss(status: number, path: string): boolean {
  return status === 401 && !FORM_ENDPOINTS.some((p) => path === p || path.startsWith(`${p}/`));
}

/** Headers of `init` plus the CSRF token when the request writes and a token is known. */
export function withCsrf(init: RequestInit | undefined, method: string, csrfToken: string | null): RequestInit {
  if (!csrfToken || !isMutating(method)) return init ?? {};
  const headers = new Headers(init?.headers);
  if (!headers.has(CSRF_HEADER)) headers.set(CSRF_HEADER, csrfToken);
  return { ...init, headers };
}

export interface AuthFetchOptions {
  /** The session's current CSRF token (read on every request, so a new login applies at once). */
  csrfToken: () => string | null;
  /** Called once per response that says the session is gone. */
  onUnauthorized: () => void;
  /** The underlying fetch (the browser's by default). */
  base?: Fetch;
  /** Resolves relative URLs when classifying them (the page origin by default). */
  origin?: string;
}

/** A fetch that adds `X-CSRF-Token` to writes, sends cookies, and reports a lost session. */
export function createAuthFetch({ csrfToken, onUnauthorized, base, origin }: AuthFetchOptions): Fetch {
  const inner: Fetch = base ?? ((input, init) => fetch(input, init));
  const resolveBase = origin ?? (typeof window !== "undefined" ? window.location.origin : "http://localhost");
  return async (input, init) => {
    const method = methodOf(input, init);
    const seeded = !init?.headers && typeof Request !== "undefined" && input instanceof Request ? { ...init, headers: input.headers } : init;
    const prepared = withCsrf(seeded, method, csrfToken());
    const response = await inner(input, { credentials: "same-origin", ...prepared });
    if (isSessionLoss(response.status, pathOf(input, resolveBase))) onUnauthorized();
    return response;
  };
}
