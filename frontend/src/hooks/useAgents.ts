import { useCallback, useEffect, useState } from "react";
import { listAgents, type AgentInfo } from "../api/extensions";
import type { Fetch } from "../api/http";

const KEY = "pronghorn.agent";

export interface AgentsState {
  agents: AgentInfo[];
  /** The picked custom agent; null: the default lead agent. */
  selected: AgentInfo | null;
  select: (name: string | null) => void;
  refresh: () => void;
}

/** Custom agents from /api/agents; the pick is remembered in localStorage while the agent exists. */
export function useAgents(fetch: Fetch): AgentsState {
  const [agents, setAgents] = useState<AgentInfo[]>([]);
  const [name, setName] = useState<string | null>(() => {
    try {
      return window.localStorage.getItem(KEY);
    } catch {
      return null;
    }
  });
  const [version, setVersion] = useState(0);

  useEffect(() => {
    const controller = new AbortController();
    listAgents(fetch, controller.signal)
      .then(setAgents)
      .catch(() => {
        if (!controller.signal.aborted) setAgents([]);
      });
    return () => controller.abort();
  }, [fetch, version]);

  const select = useCallback((next: string | null) => {
    setName(next);
    try {
      if (next) window.localStorage.setItem(KEY, next);
      else window.localStorage.removeItem(KEY);
    } catch {
      /* ignore */
    }
  }, []);
  const refresh = useCallback(() => setVersion((v) => v + 1), []);
  const selected = agents.find((a) => a.name === name) ?? null;
  return { agents, selected, select, refresh };
}
