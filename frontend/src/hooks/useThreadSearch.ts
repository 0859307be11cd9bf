import type { Thread } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useRef, useState } from "react";
import { useGateway } from "../api/gateway";
import { searchThreads } from "../api/rest";
import { describeError } from "../lib/errors";

export interface ThreadSearch {
  /** Server results for the query (null: no query, or its first page is not in yet). */
  results: Thread[] | null;
  searching: boolean;
  error: string | null;
  hasMore: boolean;
  loadMore: () => void;
  /** Keep the shown results in step with a change made from them (pin, rename). */
  patchMetadata: (threadId: string, metadata: Record<string, unknown>) => void;
  /** Drop a deleted thread from the shown results. */
  drop: (threadId: string) => void;
}

interface Found {
  q: string;
  results: Thread[];
  next: number | null;
  error: string | null;
  loading: boolean;
}

const DEBOUNCE_MS = 250;
const LIMIT = 30;

/** Whether `query` has a word the server can search for (letters or digits). */
export function searchable(query: string): boolean {
  return /[\p{L}\p{N}_]/u.test(query);
}

/**
 * Server-side search over titles and message text (`GET /api/threads/search`), debounced,
 * paged (`loadMore`); a newer query cancels the older one's request.
 */
export function useThreadSearch(query: string): ThreadSearch {
  const { fetch } = useGateway();
  const q = query.trim();
  const active = searchable(q);
  const [found, setFound] = useState<Found | null>(null);
  const signal = useRef<AbortSignal | null>(null);

  useEffect(() => {
    if (!active) return;
    const controller = new AbortController();
    signal.current = controller.signal;
    const timer = window.setTimeout(() => {
      searchThreads(fetch, q, 0, LIMIT, controller.signal)
        .then((page) => setFound({ q, results: page.threads, next: page.next_offset, error: null, loading: false }))
        .catch((e: unknown) => {
          if (!controller.signal.aborted) setFound({ q, results: [], next: null, error: describeError(e), loading: false });
        });
    }, DEBOUNCE_MS);
    return () => {
      window.clearTimeout(timer);
      controller.abort();
    };
  }, [fetch, q, active]);

  const fresh = active && found && found.q === q ? found : null;

  const loadMore = useCallback(() => {
    if (!fresh || fresh.next === null || fresh.loading) return;
    const at = fresh.next;
    const current = signal.current ?? undefined;
    setFound({ ...fresh, loading: true });
    searchThreads(fetch, fresh.q, at, LIMIT, current)
      .then((page) =>
        setFound((prev) => {
          if (!prev || prev.q !== fresh.q) return prev;
          const known = new Set(prev.results.map((t) => t.thread_id));
          const added = page.threads.filter((t) => !known.has(t.thread_id));
          return { ...prev, results: [...prev.results, ...added], next: page.next_offset, loading: false };
        }),
      )
      .catch((e: unknown) => {
        if (!current?.aborted) setFound((prev) => (prev && prev.q === fresh.q ? { ...prev, error: describeError(e), loading: false } : prev));
      });
  }, [fetch, fresh]);

  const patchMetadata = useCallback((threadId: string, metadata: Record<string, unknown>) => {
    setFound((prev) =>
      prev
        ? { ...prev, results: prev.results.map((t) => (t.thread_id === threadId ? { ...t, metadata: { ...t.metadata, ...metadata } } : t)) }
        : prev,
    );
  }, []);
  const drop = useCallback((threadId: string) => {
    setFound((prev) => (prev ? { ...prev, results: prev.results.filter((t) => t.thread_id !== threadId) } : prev));
  }, []);

  return {
    patchMetadata,
    drop,
    results: fresh ? fresh.results : null,
    searching: active && (!fresh || fresh.loading),
    error: fresh?.error ?? null,
    hasMore: fresh !== null && fresh.next !== null,
    loadMore,
  };
}
