import { useCallback, useEffect, useState } from "react";
import { useGateway } from "../api/gateway";
import { deleteFeedback, fetchMessageRuns, fetchThreadFeedback, putFeedback, type Feedback } from "../api/governance";

export interface FeedbackState {
  /** The run that wrote this message (null: not known yet). */
  runOf: (messageId: string) => string | null;
  ratingOf: (runId: string) => Feedback | null;
  rate: (runId: string, rating: 1 | -1, comment?: string) => Promise<void>;
  clear: (runId: string) => Promise<void>;
}

/** Which run each answer came from, and the user's thumbs on it; refetched when `version` changes. */
export function useFeedback(threadId: string | null, version: number): FeedbackState {
  const { fetch } = useGateway();
  const [runs, setRuns] = useState<Map<string, string>>(new Map());
  const [given, setGiven] = useState<Map<string, Feedback>>(new Map());

  useEffect(() => {
    if (!threadId) return;
    const controller = new AbortController();
    Promise.all([fetchMessageRuns(fetch, threadId, controller.signal), fetchThreadFeedback(fetch, threadId, controller.signal)])
      .then(([byMessage, feedback]) => {
        setRuns(byMessage);
        setGiven(new Map(feedback.map((f) => [f.run_id, f])));
      })
      .catch(() => {
        /* feedback is optional: nothing is shown when it cannot be loaded */
      });
    return () => controller.abort();
  }, [fetch, threadId, version]);

  const rate = useCallback(
    async (runId: string, rating: 1 | -1, comment?: string) => {
      if (!threadId) return;
      const saved = await putFeedback(fetch, threadId, runId, rating, comment);
      setGiven((prev) => new Map(prev).set(runId, saved));
    },
    [fetch, threadId],
  );
  const clear = useCallback(
    async (runId: string) => {
      if (!threadId) return;
      await deleteFeedback(fetch, threadId, runId);
      setGiven((prev) => {
        const next = new Map(prev);
        next.delete(runId);
        return next;
      });
    },
    [fetch, threadId],
  );

  return {
    runOf: (messageId) => runs.get(messageId) ?? null,
    ratingOf: (runId) => given.get(runId) ?? null,
    rate,
    clear,
  };
}
