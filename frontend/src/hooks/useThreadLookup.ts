import type { Client, Thread } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useState } from "react";

/** Whether the thread in the URL can be opened: "none" (a new chat), still "checking", "found", "missing". */
export type ThreadAvailability = "none" | "checking" | "found" | "missing";

function isNotFound(error: unknown): boolean {
  return typeof error === "object" && error !== null && "status" in error && error.status === 404;
}

/**
 * Checks a thread id from the URL before the chat opens it, so a deleted thread or another
 * user's (the gateway answers 404 to both) shows a not-found page instead of a broken chat.
 * Threads in the sidebar list or created here (`markKnown`) need no check.
 */
export function useThreadLookup(client: Client, threadId: string | null, listed: readonly Thread[]) {
  const [results, setResults] = useState<ReadonlyMap<string, boolean>>(() => new Map());
  const inList = threadId !== null && listed.some((t) => t.thread_id === threadId);
  const known = threadId !== null ? results.get(threadId) : undefined;

  useEffect(() => {
    if (threadId === null || inList || known !== undefined) return;
    let cancelled = false;
    client.threads
      .get(threadId)
      // Anything but a 404 (a network blip, a 5xx) lets the chat open and report it as before.
      .then(
        () => true,
        (e: unknown) => !isNotFound(e),
      )
      .then((found) => {
        if (!cancelled) setResults((prev) => new Map(prev).set(threadId, found));
      });
    return () => {
      cancelled = true;
    };
  }, [client, threadId, inList, known]);

  const markKnown = useCallback((id: string) => {
    setResults((prev) => (prev.get(id) === true ? prev : new Map(prev).set(id, true)));
  }, []);

  const availability: ThreadAvailability =
    threadId === null ? "none" : inList || known === true ? "found" : known === false ? "missing" : "checking";
  return { availability, markKnown };
}
