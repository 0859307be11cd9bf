import type { Client } from "@langchain/langgraph-sdk";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { describe, expect, it } from "vitest";
import { GatewayContext } from "../api/gateway";
import { HttpError, type Fetch } from "../api/http";
import { useResource } from "./useResource";

const gatewayFetch: Fetch = () => Promise.reject(new Error("not used"));
const wrapper = ({ children }: { children: ReactNode }) => (
  <GatewayContext.Provider value={{ client: {} as Client, fetch: gatewayFetch }}>{children}</GatewayContext.Provider>
);

describe("useResource", () => {
  it("loads with the session's fetch, says what failed, and a reload that works clears the error", async () => {
    const answers: (number | Error)[] = [new HttpError(503, "down"), 7];
    const seen: Fetch[] = [];
    const load = (fetch: Fetch) => {
      seen.push(fetch);
      const next = answers.shift();
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next ?? 0);
    };
    const { result } = renderHook(() => useResource(load, "the numbers"), { wrapper });
    await waitFor(() => expect(result.current.error).toMatch(/^Could not load the numbers: /));
    expect(result.current.error).toContain("down");
    expect(result.current.data).toBeNull();
    expect(seen[0]).toBe(gatewayFetch);
    act(() => result.current.reload());
    await waitFor(() => expect(result.current.data).toBe(7));
    expect(result.current.error).toBeNull();
  });

  it("runs a change: true when it works, else false with `Could not <failure>`", async () => {
    const load = () => Promise.resolve("x");
    const { result } = renderHook(() => useResource(load, "it"), { wrapper });
    await waitFor(() => expect(result.current.data).toBe("x"));
    let ok = false;
    await act(async () => {
      ok = await result.current.act("save it", () => Promise.resolve());
    });
    expect(ok).toBe(true);
    expect(result.current.error).toBeNull();
    await act(async () => {
      ok = await result.current.act("save it", () => Promise.reject(new HttpError(409, "taken")));
    });
    expect(ok).toBe(false);
    expect(result.current.error).toMatch(/^Could not save it: .*taken/);
  });

  it("loads nothing while not enabled", async () => {
    let loads = 0;
    const load = () => {
      loads += 1;
      return Promise.resolve(1);
    };
    const { result, rerender } = renderHook(({ on }: { on: boolean }) => useResource(load, "it", on), {
      wrapper,
      initialProps: { on: false },
    });
    expect(loads).toBe(0);
    rerender({ on: true });
    await waitFor(() => expect(result.current.data).toBe(1));
    expect(loads).toBe(1);
  });
});
