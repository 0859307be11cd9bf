// @vitest-environment node
import { describe, expect, it } from "vitest";
import type { AuthConfig, User } from "../api/auth";
import { HttpError } from "../api/http";
import { loginFailure, passwordChangeFailure, setupFailure } from "./loginErrors";
import { loginPath, parseRoute, pathForRoute, safeNext } from "./route";
import { gateView, type Session } from "./session";

const ID = "0190a7c2-1b2c-7d3e-8f40-123456789abc";

describe("after-login target", () => {
  it("keeps same-origin paths and refuses the rest", () => {
    expect(safeNext(`/t/${ID}`)).toBe(`/t/${ID}`);
    expect(safeNext("/settings/keys?x=1")).toBe("/settings/keys?x=1");
    expect(safeNext("https://evil.example/")).toBe("/");
    expect(safeNext("//evil.example/")).toBe("/");
    expect(safeNext("/\\evil.example")).toBe("/");
    expect(safeNext("/login?next=/x")).toBe("/");
    expect(safeNext("/setup?token=abc")).toBe("/");
    expect(safeNext(null)).toBe("/");
  });

  it("builds the login URL that comes back to the page (a 401 sends you there)", () => {
    expect(loginPath(`/t/${ID}`)).toBe(`/login?next=${encodeURIComponent(`/t/${ID}`)}`);
    expect(loginPath("/")).toBe("/login");
    const route = parseRoute("/login", `?next=${encodeURIComponent(`/t/${ID}`)}&error=denied`);
    expect(route).toEqual({ page: "login", next: `/t/${ID}`, error: "denied" });
    expect(parseRoute("/login", "?next=https://evil.example")).toEqual({ page: "login", next: "/", error: null });
  });

  it("round-trips every page", () => {
    expect(parseRoute("/setup", "?token=abc%2B1")).toEqual({ page: "setup", token: "abc+1" });
    expect(pathForRoute({ page: "setup", token: "abc+1" })).toBe("/setup?token=abc%2B1");
    for (const page of ["keys", "users", "password", "memory", "channels"] as const) {
      const path = pathForRoute({ page });
      expect(parseRoute(path, "")).toEqual({ page });
      expect(parseRoute(`${path}/`, "")).toEqual({ page });
    }
    expect(parseRoute(`/t/${ID}`, "")).toEqual({ page: "chat", threadId: ID });
    expect(parseRoute("/nowhere", "")).toEqual({ page: "chat", threadId: null });
  });
});

describe("what the gate shows", () => {
  const config = (over: Partial<AuthConfig>): AuthConfig => ({ mode: "local", setup_required: false, oidc: null, ...over });
  const user: User = { id: "u1", username: "ada", display_name: null, role: "admin", disabled: false, created_at: "" };
  const session: Session = { mode: "local", user, csrfToken: "t", oidc: null };

  it("decides between app, setup, login and custom sign-in", () => {
    expect(gateView(config({ mode: "none" }), null)).toBe("app");
    expect(gateView(config({}), session)).toBe("app");
    expect(gateView(config({ setup_required: true }), null)).toBe("setup");
    expect(gateView(config({}), null)).toBe("login");
    expect(gateView(config({ mode: "custom" }), null)).toBe("custom-signin");
  });
});

describe("form errors", () => {
  it("says what went wrong and how long to wait", () => {
    expect(loginFailure(new HttpError(401, "Invalid username or password"))).toEqual({
      message: "Wrong username or password.",
      waitSeconds: 0,
    });
    expect(loginFailure(new HttpError(429, "slow down", 30))).toEqual({
      message: "Too many attempts. Try again in 30 seconds.",
      waitSeconds: 30,
    });
    expect(loginFailure(new TypeError("Failed to fetch")).message).toBe("Could not sign in: TypeError: Failed to fetch");
    expect(setupFailure(new HttpError(403, "Wrong or used setup token"))).toBe("Wrong or used setup token");
    expect(passwordChangeFailure(new HttpError(403, "current_password is wrong"))).toBe("The current password is wrong.");
    expect(passwordChangeFailure(new HttpError(403, "CSRF token missing or wrong"))).toBe("CSRF token missing or wrong");
  });
});
