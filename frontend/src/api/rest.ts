/** Helpers for the gateway's product REST API under /api; each takes the session's fetch. */

import type { Thread } from "@langchain/langgraph-sdk";
import { errorFrom, HttpError, type Fetch } from "./http";
import type { Schema } from "./types";

export { HttpError };

export type ModelInfo = Schema<"ModelInfo">;
export type ModelsResponse = Schema<"ModelList">;
export type ConfigStatus = Schema<"ConfigStatus">;
/** An uploaded file; `markdown` is the Markdown copy of a document (PDF, DOCX, XLSX, PPTX,
 * HTML, EPUB) made at upload, `conversion_error` why a document got none. */
export type UploadedFile = Schema<"UploadedFile">;
export type RunUsage = Schema<"RunTokenUsage">;
export type TokenUsage = Schema<"ThreadTokenUsage">;

async function getJson<T>(fetch: Fetch, url: string, signal?: AbortSignal): Promise<T> {
  const response = await fetch(url, { signal, headers: { Accept: "application/json" } });
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as T;
}

const threadBase = (threadId: string) => `/api/threads/${encodeURIComponent(threadId)}`;

export function fetchModels(fetch: Fetch, signal?: AbortSignal): Promise<ModelsResponse> {
  return getJson<ModelsResponse>(fetch, "/api/models", signal);
}

export function fetchConfigStatus(fetch: Fetch, signal?: AbortSignal): Promise<ConfigStatus> {
  return getJson<ConfigStatus>(fetch, "/api/config/status", signal);
}

/** Resolves when /health answers 2xx; rejects otherwise (including network failure). */
export async function checkHealth(fetch: Fetch, signal?: AbortSignal): Promise<void> {
  const response = await fetch("/health", { signal, cache: "no-store" });
  if (!response.ok) throw await errorFrom(response);
}

export async function uploadFiles(fetch: Fetch, threadId: string, files: readonly File[], signal?: AbortSignal): Promise<UploadedFile[]> {
  const form = new FormData();
  for (const f of files) form.append("files", f, f.name);
  const response = await fetch(`${threadBase(threadId)}/uploads`, { method: "POST", body: form, signal });
  if (!response.ok) throw await errorFrom(response);
  const body = (await response.json()) as Partial<Schema<"UploadResult">>;
  return body.files ?? [];
}

/** The raw listing (files plus, if the gateway sends them, limits). */
export async function listUploads(fetch: Fetch, threadId: string, signal?: AbortSignal): Promise<{ files: UploadedFile[]; raw: unknown }> {
  const raw = await getJson<unknown>(fetch, `${threadBase(threadId)}/uploads`, signal);
  const files = raw && typeof raw === "object" && Array.isArray((raw as { files?: unknown }).files)
    ? ((raw as { files: UploadedFile[] }).files)
    : [];
  return { files, raw };
}

export async function deleteUpload(fetch: Fetch, threadId: string, name: string): Promise<void> {
  const response = await fetch(`${threadBase(threadId)}/uploads/${encodeURIComponent(name)}`, { method: "DELETE" });
  if (!response.ok && response.status !== 404) throw await errorFrom(response);
}

export function fetchTokenUsage(fetch: Fetch, threadId: string, signal?: AbortSignal): Promise<TokenUsage> {
  return getJson<TokenUsage>(fetch, `${threadBase(threadId)}/token-usage`, signal);
}

export type SuggestionTurn = Schema<"SuggestionMessage">;

/** Up to `n` follow-up questions for the conversation (empty when suggestions are off). */
export async function fetchSuggestions(
  fetch: Fetch,
  threadId: string,
  messages: readonly SuggestionTurn[],
  n = 3,
  signal?: AbortSignal,
): Promise<string[]> {
  const response = await fetch(`${threadBase(threadId)}/suggestions`, {
    method: "POST",
    signal,
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ messages: [...messages], n } satisfies Schema<"SuggestionsRequest">),
  });
  if (!response.ok) throw await errorFrom(response);
  const body = (await response.json()) as { suggestions?: unknown };
  return Array.isArray(body.suggestions) ? body.suggestions.filter((s): s is string => typeof s === "string") : [];
}

export interface ArtifactPiece {
  bytes: Uint8Array;
  /** Size of the whole file when the server said (Content-Range or Content-Length). */
  total: number | null;
}

/**
 * Bytes `[start, start + length)` of an artifact (a Range request; a server that ignores
 * Range answers 200 and the piece is cut from the whole body).
 */
export async function fetchArtifactRange(fetch: Fetch, url: string, start: number, length: number, signal?: AbortSignal): Promise<ArtifactPiece> {
  const response = await fetch(url, { signal, headers: { Range: `bytes=${start}-${start + length - 1}` } });
  if (response.status === 416) return { bytes: new Uint8Array(), total: start };
  if (!response.ok) throw await errorFrom(response);
  const body = new Uint8Array(await response.arrayBuffer());
  if (response.status === 206) {
    const total = /\/(\d+)\s*$/.exec(response.headers.get("content-range") ?? "");
    return { bytes: body, total: total ? Number(total[1]) : null };
  }
  return { bytes: body.slice(start, start + length), total: body.length };
}

/** A page of search results; its threads are the SDK's `Thread` (the same LangGraph body). */
export type ThreadSearchPage = Omit<Schema<"ThreadSearchResult">, "threads"> & { threads: Thread[] };

/** `GET /api/threads/search`: the caller's threads by title and message text, best first. */
export function searchThreads(fetch: Fetch, q: string, offset = 0, limit = 30, signal?: AbortSignal): Promise<ThreadSearchPage> {
  const params = new URLSearchParams({ q, limit: String(limit), offset: String(offset) });
  return getJson<ThreadSearchPage>(fetch, `/api/threads/search?${params.toString()}`, signal);
}
