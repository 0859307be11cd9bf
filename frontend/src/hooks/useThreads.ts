import type { Client, Thread } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useRef, useState } from "react";
import { describeError } from "../lib/errors";
import { orderThreads } from "../lib/threads";

export interface ThreadsState {
  threads: Thread[];
  loading: boolean;
  error: string | null;
  /** More pages of older threads are there (load them with `loadMore`). */
  hasMore: boolean;
  refresh: () => void;
  loadMore: () => void;
  rename: (threadId: string, title: string) => Promise<void>;
  remove: (threadId: string) => Promise<void>;
  /** Pin or unpin (`metadata.pinned`): pinned threads stay at the top. */
  setPinned: (threadId: string, pinned: boolean) => Promise<void>;
}

export const PAGE = 50;

/**
 * The thread list through the SDK, a page at a time (`threads.search` newest first, the next
 * page when the list is scrolled to its end), with the pinned threads fetched on their own so
 * they are at the top even when they are old. Rename and pin via metadata, delete.
 */
export function useThreads(client: Client): ThreadsState {
  const [threads, setThreads] = useState<Thread[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const generation = useRef(0);
  const offset = useRef(0);
  const fetching = useRef(false);

  const refresh = useCallback(() => {
    const gen = ++generation.current;
    fetching.current = true;
    Promise.all([
      client.threads.search({ limit: PAGE, sortBy: "updated_at", sortOrder: "desc" }),
      client.threads.search({ limit: 100, metadata: { pinned: true }, sortBy: "updated_at", sortOrder: "desc" }),
    ])
      .then(([page, pinned]) => {
        if (gen !== generation.current) return;
        offset.current = page.length;
        setHasMore(page.length === PAGE);
        setThreads(orderThreads([...pinned, ...page]));
        setError(null);
      })
      .catch((e: unknown) => {
        if (gen === generation.current) setError(describeError(e));
      })
      .finally(() => {
        if (gen === generation.current) {
          setLoading(false);
          fetching.current = false;
        }
      });
  }, [client]);

  const loadMore = useCallback(() => {
    if (fetching.current) return;
    const gen = generation.current;
    fetching.current = true;
    client.threads
      .search({ limit: PAGE, offset: offset.current, sortBy: "updated_at", sortOrder: "desc" })
      .then((page) => {
        if (gen !== generation.current) return;
        offset.current += page.length;
        setHasMore(page.length === PAGE);
        setThreads((prev) => orderThreads([...prev, ...page]));
      })
      .catch((e: unknown) => {
        if (gen === generation.current) setError(describeError(e));
      })
      .finally(() => {
        if (gen === generation.current) fetching.current = false;
      });
  }, [client]);

  useEffect(() => {
    refresh();
  }, [refresh]);

  const patchMetadata = useCallback(
    async (threadId: string, metadata: Record<string, unknown>) => {
      const updated = await client.threads.update(threadId, { metadata });
      setThreads((prev) =>
        prev.some((t) => t.thread_id === threadId)
          ? orderThreads(prev.map((t) => (t.thread_id === threadId ? { ...t, ...updated, values: t.values } : t)))
          : metadata.pinned === true
            ? orderThreads([...prev, updated]) // pinned from a search: not among the pages loaded
            : prev,
      );
    },
    [client],
  );

  const rename = useCallback((threadId: string, title: string) => patchMetadata(threadId, { title }), [patchMetadata]);
  const setPinned = useCallback((threadId: string, pinned: boolean) => patchMetadata(threadId, { pinned }), [patchMetadata]);

  const remove = useCallback(
    async (threadId: string) => {
      await client.threads.delete(threadId);
      setThreads((prev) => prev.filter((t) => t.thread_id !== threadId));
    },
    [client],
  );

  return { threads, loading, error, hasMore, refresh, loadMore, rename, remove, setPinned };
}
