import { useEffect, useState } from "react";
import type { Fetch } from "../api/http";
import { fetchModels, type ModelInfo } from "../api/rest";

const KEY = "pronghorn.model";

export interface ModelsState {
  models: ModelInfo[];
  selected: string | null;
  select: (name: string) => void;
  error: string | null;
}

/** Models from /api/models; the choice is remembered in localStorage while it still exists. */
export function useModels(fetch: Fetch): ModelsState {
  const [models, setModels] = useState<ModelInfo[]>([]);
  const [selected, setSelected] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    fetchModels(fetch, controller.signal)
      .then((res) => {
        setModels(res.models);
        let stored: string | null = null;
        try {
          stored = window.localStorage.getItem(KEY);
        } catch {
          /* ignore */
        }
        const names = new Set(res.models.map((m) => m.name));
        const fallback = res.default ?? res.models.find((m) => m.is_default)?.name ?? res.models[0]?.name ?? null;
        setSelected(stored && names.has(stored) ? stored : fallback);
        setError(null);
      })
      .catch((e: unknown) => {
        if (!controller.signal.aborted) setError(e instanceof Error ? e.message : String(e));
      });
    return () => controller.abort();
  }, [fetch]);

  const select = (name: string) => {
    setSelected(name);
    try {
      window.localStorage.setItem(KEY, name);
    } catch {
      /* ignore */
    }
  };

  return { models, selected, select, error };
}
