/** The caller's long-term memory: GET/DELETE /api/memory, facts CRUD, export/import, status. */

import { errorFrom, type Fetch } from "./http";
import type { Schema } from "./types";

export type Fact = Schema<"MemoryFact">;
export type Category = Fact["category"];

export const CATEGORIES: readonly Category[] = [
  "preference",
  "correction",
  "context",
  "goal",
  "behavior",
  "identity",
  "constraint",
  "decision",
  "knowledge",
  "other",
];

/** One summary; `updatedAt` is "" when it was never written. */
export type Summary = Schema<"MemorySection">;
/** The memory document every memory call answers (DeerFlow's `UserMemory`, plus our
 * `revision` and `agentName`). */
export type MemoryDocument = Schema<"UserMemory">;
export type UserSection = keyof MemoryDocument["user"];
export type HistorySection = keyof MemoryDocument["history"];
export type MemoryStatus = Schema<"MemoryStatus">;
export type FactEdit = Schema<"FactPatch">;

async function call<T>(fetch: Fetch, url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, {
    ...init,
    headers: { Accept: "application/json", ...(init?.body ? { "Content-Type": "application/json" } : {}) },
  });
  if (!response.ok) throw await errorFrom(response);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

export const getMemory = (fetch: Fetch, signal?: AbortSignal) => call<MemoryDocument>(fetch, "/api/memory", { signal });

export const getMemoryStatus = (fetch: Fetch, signal?: AbortSignal) =>
  call<MemoryStatus>(fetch, "/api/memory/status", { signal });

export const addFact = (fetch: Fetch, fact: Pick<Schema<"FactCreate">, "content" | "category">) =>
  call<MemoryDocument>(fetch, "/api/memory/facts", { method: "POST", body: JSON.stringify(fact) });

export const editFact = (fetch: Fetch, id: string, edit: FactEdit) =>
  call<MemoryDocument>(fetch, `/api/memory/facts/${encodeURIComponent(id)}`, { method: "PATCH", body: JSON.stringify(edit) });

export const deleteFact = (fetch: Fetch, id: string) =>
  call<MemoryDocument>(fetch, `/api/memory/facts/${encodeURIComponent(id)}`, { method: "DELETE" });

export const clearMemory = (fetch: Fetch) => call<MemoryDocument>(fetch, "/api/memory", { method: "DELETE" });

export const exportMemory = (fetch: Fetch) => call<MemoryDocument>(fetch, "/api/memory/export");

export const importMemory = (fetch: Fetch, doc: unknown) =>
  call<MemoryDocument>(fetch, "/api/memory/import", { method: "POST", body: JSON.stringify(doc) });

/** The JSON of an export file, or an error message for the user. */
export function parseExportFile(text: string): { doc: unknown } | { error: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { error: "That file is not JSON." };
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc) || !Array.isArray((doc as { facts?: unknown }).facts)) {
    return { error: "That file is not a memory export (no facts list)." };
  }
  return { doc };
}
