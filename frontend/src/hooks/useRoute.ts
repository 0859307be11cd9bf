import { useCallback, useEffect, useState } from "react";
import { parseRoute, pathForRoute, type Route } from "../lib/route";

export type Go = (route: Route, opts?: { replace?: boolean }) => void;

const current = () => parseRoute(window.location.pathname, window.location.search);

/** The page in the URL, kept in sync with back/forward. */
export function useRoute(): [Route, Go] {
  const [route, setRoute] = useState<Route>(current);

  useEffect(() => {
    const onPop = () => setRoute(current());
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  const go = useCallback<Go>((next, opts) => {
    const path = pathForRoute(next);
    if (`${window.location.pathname}${window.location.search}` !== path) {
      if (opts?.replace) window.history.replaceState(null, "", path);
      else window.history.pushState(null, "", path);
    }
    setRoute(parseRoute(window.location.pathname, window.location.search));
  }, []);

  return [route, go];
}
