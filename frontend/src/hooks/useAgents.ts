import { useCallback, useState } from "react";
import { listAgents, type AgentInfo } from "../api/extensions";
import { useResource } from "./useResource";

const KEY = "pronghorn.agent";
const NONE: AgentInfo[] = [];

export interface AgentsState {
  agents: AgentInfo[];
  /** The picked custom agent; null: the default lead agent. */
  selected: AgentInfo | null;
  select: (name: string | null) => void;
  refresh: () => void;
}

/**
 * Custom agents from /api/agents (loaded with the session's fetch; while none answered, or
 * when the list cannot be loaded, there are none); the pick is remembered in localStorage
 * while the agent exists.
 */
export function useAgents(): AgentsState {
  const { data, reload } = useResource(listAgents, "the agents");
  const [name, setName] = useState<string | null>(() => {
    try {
      return window.localStorage.getItem(KEY);
    } catch {
      return null;
    }
  });

  const select = useCallback((next: string | null) => {
    setName(next);
    try {
      if (next) window.localStorage.setItem(KEY, next);
      else window.localStorage.removeItem(KEY);
    } catch {
      /* ignore */
    }
  }, []);
  const agents = data ?? NONE;
  const selected = agents.find((a) => a.name === name) ?? null;
  return { agents, selected, select, refresh: reload };
}
