import { useEffect, useState } from "react";
import { useGateway } from "../api/gateway";
import { fetchTokenUsage, type TokenUsage } from "../api/rest";

/** Token usage of a thread; refetched whenever `version` changes (e.g. after each run). */
export function useTokenUsage(threadId: string | null, version: number): TokenUsage | null {
  const { fetch } = useGateway();
  const [usage, setUsage] = useState<{ threadId: string; data: TokenUsage } | null>(null);

  useEffect(() => {
    if (!threadId) return;
    const controller = new AbortController();
    fetchTokenUsage(fetch, threadId, controller.signal)
      .then((data) => setUsage({ threadId, data }))
      .catch(() => {
        /* usage is optional: a missing endpoint or a fresh thread shows nothing */
      });
    return () => controller.abort();
  }, [fetch, threadId, version]);

  return usage && usage.threadId === threadId ? usage.data : null;
}
