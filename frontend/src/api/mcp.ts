/** `/api/mcp/*`: MCP servers (config with masked secrets), their status, a connection test. */
import { errorFrom, type Fetch } from "./http";
import type { Schema } from "./types";

export type McpConfig = Omit<Schema<"McpConfigView">, "mcp_servers"> & { mcp_servers: Record<string, McpServer> };
export type McpToolInfo = Schema<"McpToolInfo">;
export type McpServerStatus = Schema<"McpServerStatus">;
export type McpType = McpServerStatus["type"];
export type McpStatus = Schema<"McpStatus">;
export type McpTestResult = Schema<"McpProbe">;

/** One server as the API types it: an open object. The gateway hands back the stored YAML
 * (secrets `***`, `${VAR}` references as written) rather than a validated model, so the
 * OpenAPI document names no schema for a server's fields. */
type StoredServer = Schema<"McpConfigView">["mcp_servers"][string];

/** The form's reading of a stored server: the generated open object with the fields the page
 * reads and writes (keys absent from the file are absent here too). */
export interface McpServer extends StoredServer {
  type?: McpType;
  enabled?: boolean;
  description?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  oauth?: Record<string, unknown>;
  tool_call_timeout_s?: number;
  startup_timeout_s?: number;
}

export const MASK = "***";

async function call<T>(fetch: Fetch, method: string, url: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers = { Accept: "application/json", "Content-Type": "application/json" };
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as T;
}

export function fetchMcpConfig(fetch: Fetch): Promise<McpConfig> {
  return call<McpConfig>(fetch, "GET", "/api/mcp/config");
}

export function saveMcpServers(fetch: Fetch, servers: Record<string, McpServer>): Promise<McpConfig> {
  return call<McpConfig>(fetch, "PUT", "/api/mcp/config", { mcp_servers: servers } satisfies Schema<"McpConfigBody">);
}

export function fetchMcpStatus(fetch: Fetch): Promise<McpStatus> {
  return call<McpStatus>(fetch, "GET", "/api/mcp/status");
}

export function testMcpServer(fetch: Fetch, name: string, server: McpServer): Promise<McpTestResult> {
  return call<McpTestResult>(fetch, "POST", "/api/mcp/test", { name, server } satisfies Schema<"McpTestBody">);
}

/** `KEY=value` lines ↔ a mapping (for env); `Key: value` lines for headers. */
export function parsePairs(text: string, separator: "=" | ":"): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf(separator);
    if (at <= 0) throw new Error(`"${line}" is not ${separator === "=" ? "KEY=value" : "Name: value"}`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

export function formatPairs(pairs: Record<string, string> | undefined, separator: "=" | ":"): string {
  const glue = separator === "=" ? "=" : ": ";
  return Object.entries(pairs ?? {})
    .map(([k, v]) => `${k}${glue}${v}`)
    .join("\n");
}
