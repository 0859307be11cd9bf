import type { Thread } from "@langchain/langgraph-sdk";
import { contentText } from "./content";

export const UNTITLED = "New chat";

/**
 * A thread's title: a user rename (`metadata.title`) wins over the agent's
 * `values.title`; otherwise the first human message; otherwise "New chat".
 */
export function threadTitle(thread: Pick<Thread, "metadata" | "values">): string {
  const metaTitle = thread.metadata?.title;
  if (typeof metaTitle === "string" && metaTitle.trim()) return metaTitle.trim();
  const values = thread.values as Record<string, unknown> | null | undefined;
  if (values && typeof values === "object" && !Array.isArray(values)) {
    if (typeof values.title === "string" && values.title.trim()) return values.title.trim();
    const messages = values.messages;
    if (Array.isArray(messages)) {
      const first = messages.find((m) => m && typeof m === "object" && (m as { type?: unknown }).type === "human");
      const text = first ? contentText((first as { content?: unknown }).content).trim() : "";
      if (text) return text.length > 60 ? `${text.slice(0, 57)}…` : text;
    }
  }
  return UNTITLED;
}

/** Case-insensitive filter on titles; every whitespace-separated word must match. */
export function filterThreads<T extends Pick<Thread, "metadata" | "values">>(threads: readonly T[], query: string): T[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...threads];
  return threads.filter((t) => {
    const title = threadTitle(t).toLowerCase();
    return words.every((w) => title.includes(w));
  });
}

/** Newest first by `updated_at` (the server already sorts; this keeps optimistic edits in order). */
export function sortThreads<T extends Pick<Thread, "updated_at">>(threads: readonly T[]): T[] {
  return [...threads].sort((a, b) => Date.parse(b.updated_at) - Date.parse(a.updated_at));
}

/** Pinned in the sidebar (`metadata.pinned`). */
export function isPinned(thread: Pick<Thread, "metadata">): boolean {
  return thread.metadata?.pinned === true;
}

/** Pinned threads first, then newest first; one entry per thread id. */
export function orderThreads<T extends Pick<Thread, "thread_id" | "metadata" | "updated_at">>(threads: readonly T[]): T[] {
  const seen = new Set<string>();
  const unique = threads.filter((t) => (seen.has(t.thread_id) ? false : (seen.add(t.thread_id), true)));
  const pinned = sortThreads(unique.filter(isPinned));
  return [...pinned, ...sortThreads(unique.filter((t) => !isPinned(t)))];
}
