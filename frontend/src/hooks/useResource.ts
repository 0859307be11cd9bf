import { useCallback, useEffect, useRef, useState, type Dispatch, type SetStateAction } from "react";
import { useGateway } from "../api/gateway";
import type { Fetch } from "../api/http";
import { describeError } from "../lib/errors";

/** What a settings page loads, its error line, and how it runs a change. */
export interface Resource<T> {
  /** The loaded value; null until the first load answers. */
  data: T | null;
  setData: Dispatch<SetStateAction<T | null>>;
  /** The page's error line (a failed load or change); null when there is none. */
  error: string | null;
  setError: Dispatch<SetStateAction<string | null>>;
  /** Load again; success clears the error line. */
  reload: () => void;
  /**
   * Run a change; a failure shows as `Could not <failure>: <reason>`. Resolves true when
   * the change went through.
   */
  act: (failure: string, change: () => Promise<void>) => Promise<boolean>;
}

/**
 * The one load/error pattern of the settings pages: `load` runs with the session's fetch on
 * mount (and on `reload`); a failure reads `Could not load <what>: <reason>`. `load` must be
 * stable (a module function or a memoized callback); an answer after unmount is dropped.
 * With `enabled` false nothing loads (a page the caller may not see).
 */
export function useResource<T>(load: (fetch: Fetch) => Promise<T>, what: string, enabled = true): Resource<T> {
  const { fetch } = useGateway();
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const mounted = useRef(true);

  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const reload = useCallback(() => {
    load(fetch)
      .then((value) => {
        if (!mounted.current) return;
        setData(value);
        setError(null);
      })
      .catch((e: unknown) => {
        if (mounted.current) setError(`Could not load ${what}: ${describeError(e)}`);
      });
  }, [fetch, load, what]);

  useEffect(() => {
    if (enabled) reload();
  }, [enabled, reload]);

  const act = useCallback(async (failure: string, change: () => Promise<void>) => {
    try {
      await change();
      return true;
    } catch (e) {
      if (mounted.current) setError(`Could not ${failure}: ${describeError(e)}`);
      return false;
    }
  }, []);

  return { data, setData, error, setError, reload, act };
}
