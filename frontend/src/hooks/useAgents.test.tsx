import type { Client } from "@langchain/langgraph-sdk";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentInfo } from "../api/extensions";
import { GatewayContext } from "../api/gateway";
import type { Fetch } from "../api/http";
import { useAgents } from "./useAgents";

function agent(name: string): AgentInfo {
  return {
    name,
    description: "",
    model: null,
    tool_groups: null,
    skills: null,
    mcp_servers: null,
    subagent_enabled: false,
    system_prompt: null,
    soul: null,
    assistant_id: `a-${name}`,
    version: null,
    created_at: null,
    updated_at: null,
  };
}

/** A gateway whose /api/agents answers the next of `lists` (the last one again when they run out). */
function gatewayWith(lists: (AgentInfo[] | number)[]) {
  const paths: string[] = [];
  const fetch: Fetch = (path) => {
    paths.push(String(path));
    const next = lists.length > 1 ? lists.shift() : lists[0];
    if (typeof next === "number") return Promise.resolve(new Response("{}", { status: next }));
    return Promise.resolve(Response.json({ agents: next }));
  };
  const wrapper = ({ children }: { children: ReactNode }) => (
    <GatewayContext.Provider value={{ client: {} as Client, fetch }}>{children}</GatewayContext.Provider>
  );
  return { paths, wrapper };
}

describe("useAgents", () => {
  afterEach(() => {
    window.localStorage.clear();
  });

  it("loads the agents with the session's fetch and refreshes them", async () => {
    const { paths, wrapper } = gatewayWith([[agent("a")], [agent("a"), agent("b")]]);
    const { result } = renderHook(() => useAgents(), { wrapper });
    expect(result.current.agents).toEqual([]);
    await waitFor(() => expect(result.current.agents.map((a) => a.name)).toEqual(["a"]));
    act(() => result.current.refresh());
    await waitFor(() => expect(result.current.agents.map((a) => a.name)).toEqual(["a", "b"]));
    expect(paths).toEqual(["/api/agents", "/api/agents"]);
  });

  it("remembers the pick, and picks the lead agent while the remembered one does not exist", async () => {
    window.localStorage.setItem("pronghorn.agent", "gone");
    const { wrapper } = gatewayWith([[agent("a")]]);
    const { result } = renderHook(() => useAgents(), { wrapper });
    await waitFor(() => expect(result.current.agents).toHaveLength(1));
    expect(result.current.selected).toBeNull();
    act(() => result.current.select("a"));
    expect(result.current.selected?.name).toBe("a");
    expect(window.localStorage.getItem("pronghorn.agent")).toBe("a");
    act(() => result.current.select(null));
    expect(result.current.selected).toBeNull();
    expect(window.localStorage.getItem("pronghorn.agent")).toBeNull();
  });

  it("has no agents when the list cannot be loaded", async () => {
    const { paths, wrapper } = gatewayWith([503]);
    const { result } = renderHook(() => useAgents(), { wrapper });
    await waitFor(() => expect(paths).toHaveLength(1));
    expect(result.current.agents).toEqual([]);
    expect(result.current.selected).toBeNull();
  });
});
