import { useCallback, useEffect, useState } from "react";
import { pathForThread, threadIdFromPath } from "../lib/route";

/** The thread id in the URL (`/t/<id>`), kept in sync with back/forward. */
export function useRoute(): [string | null, (threadId: string | null, opts?: { replace?: boolean }) => void] {
  const [threadId, setThreadId] = useState(() => threadIdFromPath(window.location.pathname));

  useEffect(() => {
    const onPop = () => setThreadId(threadIdFromPath(window.location.pathname));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  const navigate = useCallback((next: string | null, opts?: { replace?: boolean }) => {
    const path = pathForThread(next);
    if (window.location.pathname !== path) {
      if (opts?.replace) window.history.replaceState(null, "", path);
      else window.history.pushState(null, "", path);
    }
    setThreadId(next);
  }, []);

  return [threadId, navigate];
}
