/** `/api/channels/*`: IM channels' status, their config (admins; secrets masked), restart,
 * the connect flow (a one-time code sent to the bot) and the caller's connected accounts. */
import { errorFrom, type Fetch } from "./http";
import type { Schema } from "./types";

export type ChannelCounts = Schema<"ChannelCounts">;
/** One configured channel as `GET /api/channels` reports it. */
export type ChannelStatus = Schema<"ChannelStatus">;

/** A JSON-schema property, as much of it as the form reads (JSON Schema, not an API body). */
export interface SchemaProperty {
  type?: string;
  format?: string;
  description?: string;
  default?: unknown;
  title?: string;
  enum?: unknown[];
  anyOf?: SchemaProperty[];
  items?: SchemaProperty;
  $ref?: string;
  minimum?: number;
  maximum?: number;
}

export interface SectionSchema {
  title?: string;
  description?: string;
  properties: Record<string, SchemaProperty>;
  required?: string[];
}

/** One platform's `channels.<name>` section (secrets `***`, `${VAR}` as written); its
 * `schema` is the section's JSON schema (read through `sectionSchema`). */
export type ChannelSection = Schema<"ChannelSectionView">;
export type ChannelsConfig = Schema<"ChannelsConfigView">;
export type ConnectCode = Schema<"ConnectCode">;
export type Connection = Schema<"ChannelConnection">;

/** The JSON schema of a section (the API types it as an open object: it is a JSON schema). */
export function sectionSchema(section: ChannelSection): SectionSchema {
  return section.schema as unknown as SectionSchema;
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
  return (response.status === 204 ? undefined : await response.json()) as T;
}

const channelUrl = (name: string, tail: string) => `/api/channels/${encodeURIComponent(name)}/${tail}`;

export function fetchChannels(fetch: Fetch): Promise<ChannelStatus[]> {
  return call<ChannelStatus[]>(fetch, "GET", "/api/channels");
}

export function fetchChannelsConfig(fetch: Fetch): Promise<ChannelsConfig> {
  return call<ChannelsConfig>(fetch, "GET", "/api/channels/config");
}

export function saveChannelConfig(fetch: Fetch, name: string, config: Record<string, unknown>): Promise<ChannelsConfig> {
  return call<ChannelsConfig>(fetch, "PUT", channelUrl(name, "config"), { config } satisfies Schema<"ChannelConfigBody">);
}

export function restartChannel(fetch: Fetch, name: string): Promise<ChannelStatus> {
  return call<ChannelStatus>(fetch, "POST", channelUrl(name, "restart"));
}

export function requestConnectCode(fetch: Fetch, name: string): Promise<ConnectCode> {
  return call<ConnectCode>(fetch, "POST", channelUrl(name, "connect"));
}

export async function fetchConnections(fetch: Fetch): Promise<Connection[]> {
  const body = await call<Schema<"ChannelConnections">>(fetch, "GET", "/api/channels/connections");
  return body.connections;
}

export function revokeConnection(fetch: Fetch, id: string): Promise<void> {
  return call<void>(fetch, "DELETE", `/api/channels/connections/${encodeURIComponent(id)}`);
}
