import { useCallback, useEffect, useRef, useState } from "react";
import { fetchArtifactRange } from "../api/rest";
import { useGateway } from "../api/gateway";
import { describeError } from "../lib/errors";

/** How much of a text artifact one preview step loads (the first piece, then each "Load more"). */
export const PREVIEW_PIECE_BYTES = 256 * 1024;

export interface ArtifactText {
  text: string | null;
  error: string | null;
  loading: boolean;
  loadedBytes: number;
  totalBytes: number | null;
  /** More of the file is left to load. */
  more: boolean;
  loadMore: () => void;
}

interface Loaded {
  url: string;
  chunks: Uint8Array[];
  loaded: number;
  total: number | null;
  error: string | null;
  loading: boolean;
}

function decode(chunks: readonly Uint8Array[], complete: boolean): string {
  const decoder = new TextDecoder("utf-8");
  let text = "";
  chunks.forEach((c, i) => {
    text += decoder.decode(c, { stream: i < chunks.length - 1 || !complete });
  });
  if (complete) text += decoder.decode();
  return text;
}

/** A text artifact loaded in bounded pieces with Range requests (never the whole of a big file at once). */
export function useArtifactText(url: string, enabled: boolean, pieceBytes = PREVIEW_PIECE_BYTES): ArtifactText {
  const { fetch } = useGateway();
  const [state, setState] = useState<Loaded | null>(null);
  const controller = useRef<AbortController | null>(null);

  const load = useCallback(
    (from: number, prev: Uint8Array[]) => {
      controller.current?.abort();
      const ctl = new AbortController();
      controller.current = ctl;
      fetchArtifactRange(fetch, url, from, pieceBytes, ctl.signal)
        .then(({ bytes, total }) => {
          if (ctl.signal.aborted) return;
          setState({ url, chunks: [...prev, bytes], loaded: from + bytes.length, total, error: null, loading: false });
        })
        .catch((e: unknown) => {
          if (ctl.signal.aborted) return;
          setState({ url, chunks: prev, loaded: from, total: null, error: describeError(e), loading: false });
        });
    },
    [fetch, url, pieceBytes],
  );

  useEffect(() => {
    if (!enabled) return;
    load(0, []);
    return () => controller.current?.abort();
  }, [enabled, load]);

  const current = state && state.url === url ? state : null;
  const more = Boolean(current && current.total !== null && current.loaded < current.total);
  const text = current && (current.chunks.length > 0 || !current.loading) ? decode(current.chunks, !more) : null;
  return {
    text,
    error: current?.error ?? null,
    loading: !current || current.loading,
    loadedBytes: current?.loaded ?? 0,
    totalBytes: current?.total ?? null,
    more,
    loadMore: () => {
      if (!current || !more || current.loading) return;
      setState({ ...current, loading: true });
      load(current.loaded, current.chunks);
    },
  };
}
