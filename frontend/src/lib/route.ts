const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `/t/<uuid>` → the thread id; anything else → null (a new chat). */
export function threadIdFromPath(pathname: string): string | null {
  const match = /^\/t\/([^/]+)\/?$/.exec(pathname);
  if (!match || !match[1]) return null;
  const id = decodeURIComponent(match[1]);
  return UUID_RE.test(id) ? id : null;
}

export function pathForThread(threadId: string | null): string {
  return threadId ? `/t/${encodeURIComponent(threadId)}` : "/";
}

/** Every page of the UI. */
export type Route =
  | { page: "chat"; threadId: string | null }
  | { page: "keys" }
  | { page: "users" }
  | { page: "password" }
  | { page: "mcp" }
  | { page: "skills" }
  | { page: "tools" }
  | { page: "agents" }
  | { page: "memory" }
  | { page: "channels" }
  | { page: "login"; next: string; error: string | null }
  | { page: "setup"; token: string };

export type SettingsPage = "keys" | "users" | "password" | "mcp" | "skills" | "tools" | "agents" | "memory" | "channels";

const SETTINGS: Record<SettingsPage, string> = {
  keys: "/settings/keys",
  users: "/settings/users",
  password: "/settings/password",
  mcp: "/settings/mcp",
  skills: "/settings/skills",
  tools: "/settings/tools",
  agents: "/settings/agents",
  memory: "/settings/memory",
  channels: "/settings/channels",
};

/**
 * Where to go after signing in: only a path on this origin (no `//host`, no `\`),
 * and never back to the login or setup pages; anything else is `/`.
 */
export function safeNext(raw: string | null | undefined): string {
  if (!raw || !raw.startsWith("/") || raw.startsWith("//") || raw.includes("\\")) return "/";
  if ([...raw].some((c) => c.charCodeAt(0) < 0x20 || c === "\u007f")) return "/";
  const path = raw.split(/[?#]/, 1)[0] ?? "/";
  if (path === "/login" || path === "/setup" || path.startsWith("/login/") || path.startsWith("/setup/")) return "/";
  return raw;
}

/** The login page URL that comes back to `next` afterwards. */
export function loginPath(next: string): string {
  const target = safeNext(next);
  return target === "/" ? "/login" : `/login?next=${encodeURIComponent(target)}`;
}

export function parseRoute(pathname: string, search: string): Route {
  const params = new URLSearchParams(search);
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, "") : pathname;
  if (path === "/login") return { page: "login", next: safeNext(params.get("next")), error: params.get("error") };
  if (path === "/setup") return { page: "setup", token: params.get("token") ?? "" };
  for (const [page, settingsPath] of Object.entries(SETTINGS) as [SettingsPage, string][]) {
    if (path === settingsPath) return { page } as Route;
  }
  return { page: "chat", threadId: threadIdFromPath(pathname) };
}

export function pathForRoute(route: Route): string {
  switch (route.page) {
    case "chat":
      return pathForThread(route.threadId);
    case "login":
      return loginPath(route.next);
    case "setup":
      return route.token ? `/setup?token=${encodeURIComponent(route.token)}` : "/setup";
    default:
      return SETTINGS[route.page];
  }
}
