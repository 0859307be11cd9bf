import type { Client, Thread } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useRef, useState } from "react";
import { describeError } from "../lib/errors";
import { sortThreads } from "../lib/threads";

export interface ThreadsState {
  threads: Thread[];
  loading: boolean;
  error: string | null;
  refresh: () => void;
  rename: (threadId: string, title: string) => Promise<void>;
  remove: (threadId: string) => Promise<void>;
}

const PAGE = 100;

/** The thread list through the SDK: `threads.search` newest first, rename via metadata, delete. */
export function useThreads(client: Client): ThreadsState {
  const [threads, setThreads] = useState<Thread[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const generation = useRef(0);

  const refresh = useCallback(() => {
    const gen = ++generation.current;
    client.threads
      .search({ limit: PAGE, sortBy: "updated_at", sortOrder: "desc" })
      .then((list) => {
        if (gen !== generation.current) return;
        setThreads(list);
        setError(null);
      })
      .catch((e: unknown) => {
        if (gen === generation.current) setError(describeError(e));
      })
      .finally(() => {
        if (gen === generation.current) setLoading(false);
      });
  }, [client]);

  useEffect(() => {
    refresh();
  }, [refresh]);

  const rename = useCallback(
    async (threadId: string, title: string) => {
      const updated = await client.threads.update(threadId, { metadata: { title } });
      setThreads((prev) => sortThreads(prev.map((t) => (t.thread_id === threadId ? { ...t, ...updated, values: t.values } : t))));
    },
    [client],
  );

  const remove = useCallback(
    async (threadId: string) => {
      await client.threads.delete(threadId);
      setThreads((prev) => prev.filter((t) => t.thread_id !== threadId));
    },
    [client],
  );

  return { threads, loading, error, refresh, rename, remove };
}
