// @vitest-environment node
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "./client";
import { CSRF_HEADER, createAuthFetch, errorFrom, isSessionLoss, parseRetryAfter, withCsrf } from "./http";

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

// A real HTTP server: it records each request; /gone answers 401, /api/auth/login 401 (a wrong
// password), /limited 429 with Retry-After, the LangGraph threads endpoint a thread.
let server: Server;
let origin = "";
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    req.resume();
    req.on("end", () => {
      const url = req.url ?? "";
      const json = (status: number, body: unknown, extra: Record<string, string> = {}) => {
        res.writeHead(status, { "Content-Type": "application/json", ...extra });
        res.end(JSON.stringify(body));
      };
      if (url.startsWith("/api/gone")) return json(401, { detail: "Session expired or invalid: log in again" });
      if (url.startsWith("/api/auth/login")) return json(401, { detail: "Invalid username or password" });
      if (url.startsWith("/api/limited")) return json(429, { detail: "Too many attempts" }, { "Retry-After": "42" });
      if (url.startsWith("/api/langgraph/threads")) {
        return json(200, { thread_id: "0190a7c2-1b2c-7d3e-8f40-123456789abc", metadata: {}, status: "idle", values: null });
      }
      return json(200, { ok: true });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function last(): Seen {
  const request = seen[seen.length - 1];
  if (!request) throw new Error("the server saw no request");
  return request;
}

function session(initial: string | null) {
  let token = initial;
  const lost: number[] = [];
  const authFetch = createAuthFetch({ csrfToken: () => token, onUnauthorized: () => lost.push(1), origin });
  return { authFetch, lost, setToken: (t: string | null) => (token = t) };
}

describe("createAuthFetch against a real server", () => {
  it("sends X-CSRF-Token on every write and never on reads", async () => {
    const { authFetch } = session("tok-1");
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      await authFetch(`${origin}/api/things`, { method, body: method === "DELETE" ? undefined : "{}" });
      expect(last().method).toBe(method);
      expect(last().headers["x-csrf-token"]).toBe("tok-1");
    }
    await authFetch(`${origin}/api/things`);
    expect(last().method).toBe("GET");
    expect(last().headers["x-csrf-token"]).toBeUndefined();
  });

  it("reads the token per request (a new login applies at once) and keeps other headers", async () => {
    const { authFetch, setToken } = session(null);
    await authFetch(`${origin}/api/things`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    expect(last().headers["x-csrf-token"]).toBeUndefined();
    setToken("tok-2");
    await authFetch(`${origin}/api/things`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    expect(last().headers["x-csrf-token"]).toBe("tok-2");
    expect(last().headers["content-type"]).toBe("application/json");
  });

  it("reports a lost session on a 401, but not a login form's wrong password", async () => {
    const { authFetch, lost } = session("tok");
    const response = await authFetch(`${origin}/api/gone`);
    expect(response.status).toBe(401);
    expect(lost).toHaveLength(1);
    await authFetch(`${origin}/api/auth/login`, { method: "POST", body: "{}" });
    expect(lost).toHaveLength(1);
    await authFetch(`${origin}/api/things`);
    expect(lost).toHaveLength(1);
  });

  it("gives the SDK client the header: threads.create carries it, threads.get does not", async () => {
    const { authFetch } = session("sdk-token");
    const client = createClient(authFetch, origin);
    await client.threads.create();
    expect(last().method).toBe("POST");
    expect(last().url).toBe("/api/langgraph/threads");
    expect(last().headers["x-csrf-token"]).toBe("sdk-token");
    expect(last().headers["x-api-key"]).toBeUndefined();
    await client.threads.get("0190a7c2-1b2c-7d3e-8f40-123456789abc");
    expect(last().method).toBe("GET");
    expect(last().headers["x-csrf-token"]).toBeUndefined();
  });

  it("makes an SDK 401 send the user to sign in", async () => {
    const { authFetch, lost } = session("tok");
    const client = createClient(authFetch, `${origin}/api/gone`);
    await expect(client.threads.search({ limit: 1 })).rejects.toThrow();
    expect(lost.length).toBeGreaterThanOrEqual(1);
  });

  it("turns a 429 into an HttpError with the Retry-After seconds", async () => {
    const { authFetch } = session(null);
    const error = await errorFrom(await authFetch(`${origin}/api/limited`, { method: "POST" }));
    expect(error.status).toBe(429);
    expect(error.retryAfter).toBe(42);
    expect(error.message).toBe("Too many attempts");
  });
});

describe("pure helpers", () => {
  it("classifies 401s", () => {
    expect(isSessionLoss(401, "/api/langgraph/threads/search")).toBe(true);
    expect(isSessionLoss(401, "/api/auth/keys")).toBe(true);
    expect(isSessionLoss(403, "/api/langgraph/threads")).toBe(false);
    expect(isSessionLoss(401, "/api/auth/login")).toBe(false);
    expect(isSessionLoss(401, "/api/auth/setup")).toBe(false);
    expect(isSessionLoss(401, "/api/auth/password")).toBe(false);
  });

  it("adds the header only to writes with a token", () => {
    const headers = (init: RequestInit) => new Headers(init.headers);
    expect(headers(withCsrf({ method: "POST" }, "post", "t")).get(CSRF_HEADER)).toBe("t");
    expect(headers(withCsrf({}, "GET", "t")).get(CSRF_HEADER)).toBeNull();
    expect(headers(withCsrf({ method: "POST" }, "POST", null)).get(CSRF_HEADER)).toBeNull();
    expect(headers(withCsrf({ headers: { [CSRF_HEADER]: "mine" } }, "DELETE", "t")).get(CSRF_HEADER)).toBe("mine");
  });

  it("parses Retry-After seconds and dates", () => {
    expect(parseRetryAfter("30")).toBe(30);
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter("soon")).toBeNull();
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT", now)).toBe(10);
  });
});
