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
  /**
   * Load again (and start the poll over); a load that works clears the line a failed load
   * left, not a change's or the page's own.
   */
  reload: () => void;
  /**
   * Run a change; a failure shows as `Could not <failure>: <reason>`. Resolves true when
   * the change went through.
   */
  act: (failure: string, change: () => Promise<void>) => Promise<boolean>;
}

/** Loading again on a timer, for a value that changes on the server by itself. */
export interface Poll<T> {
  /** Milliseconds from an answer to the next load. */
  every: number;
  /** Stop once this holds of a loaded value (default: never); a failed load goes on. */
  until?: (value: T) => boolean;
  /** At most this many loads after the first one or a `reload` (default: no limit). */
  times?: number;
}

export interface ResourceOptions<T> {
  /** False: nothing loads (a page the caller may not see). Default true. */
  enabled?: boolean;
  /** Load again on a timer; stable like `load` (a module constant). */
  poll?: Poll<T>;
}

/**
 * The one load/error pattern of the settings pages: `load` runs with the session's fetch on
 * mount (and on `reload`, and on `poll`'s timer); a failure reads `Could not load <what>:
 * <reason>`. `load` must be stable (a module function or a memoized callback); an answer
 * after unmount, or to a load a `reload` replaced, is dropped.
 */
export function useResource<T>(
  load: (fetch: Fetch) => Promise<T>,
  what: string,
  { enabled = true, poll }: ResourceOptions<T> = {},
): Resource<T> {
  const { fetch } = useGateway();
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const mounted = useRef(true);
  const chain = useRef(0); // answers count only for the newest reload's loads
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const loadError = useRef<string | null>(null); // the line the last failed load showed

  const stop = useCallback(() => {
    chain.current += 1;
    if (timer.current !== null) clearTimeout(timer.current);
    timer.current = null;
  }, []);

  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
      stop();
    };
  }, [stop]);

  const reload = useCallback(() => {
    stop();
    const id = chain.current;
    let polls = 0;
    const again = (loaded: { value: T } | null) => {
      if (!poll || polls >= (poll.times ?? Infinity)) return;
      if (loaded && poll.until?.(loaded.value)) return;
      polls += 1;
      timer.current = setTimeout(once, poll.every);
    };
    const once = () => {
      timer.current = null;
      load(fetch).then(
        (value) => {
          if (!mounted.current || id !== chain.current) return;
          setData(() => value);
          const failed = loadError.current;
          loadError.current = null;
          setError((line) => (line === failed ? null : line));
          again({ value });
        },
        (e: unknown) => {
          if (!mounted.current || id !== chain.current) return;
          const line = `Could not load ${what}: ${describeError(e)}`;
          loadError.current = line;
          setError(line);
          again(null);
        },
      );
    };
    once();
  }, [fetch, load, what, poll, stop]);

  useEffect(() => {
    if (!enabled) return;
    reload();
    return stop;
  }, [enabled, reload, stop]);

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
