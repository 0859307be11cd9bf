import type { Client } from "@langchain/langgraph-sdk";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { GatewayContext } from "../api/gateway";
import { HttpError, type Fetch } from "../api/http";
import { useResource, type Poll } from "./useResource";

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
    const { result, rerender } = renderHook(({ on }: { on: boolean }) => useResource(load, "it", { enabled: on }), {
      wrapper,
      initialProps: { on: false },
    });
    expect(loads).toBe(0);
    rerender({ on: true });
    await waitFor(() => expect(result.current.data).toBe(1));
    expect(loads).toBe(1);
  });

  describe("with a poll", () => {
    afterEach(() => {
      vi.useRealTimers();
    });
    /** Let the timers run `ms` and every answer they bring settle. */
    const pass = (ms: number) => act(() => vi.advanceTimersByTimeAsync(ms));

    it("loads again every so often until the value says stop, and a reload starts over", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      let loads = 0;
      const load = () => Promise.resolve((loads += 1));
      const poll: Poll<number> = { every: 100, until: (n) => n % 3 === 0 };
      const { result } = renderHook(() => useResource(load, "it", { poll }), { wrapper });
      await pass(0);
      expect(result.current.data).toBe(1);
      await pass(100);
      expect(result.current.data).toBe(2);
      await pass(10_000);
      expect(loads).toBe(3);
      act(() => result.current.reload());
      await pass(10_000);
      expect(loads).toBe(6);
      expect(result.current.data).toBe(6);
    });

    it("loads at most `times` more after the first load or a reload", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      let loads = 0;
      const load = () => Promise.resolve((loads += 1));
      const poll: Poll<number> = { every: 50, times: 2 };
      const { result } = renderHook(() => useResource(load, "it", { poll }), { wrapper });
      await pass(10_000);
      expect(loads).toBe(3);
      act(() => result.current.reload());
      act(() => result.current.reload()); // the first reload's chain ends here
      await pass(10_000);
      expect(loads).toBe(7);
    });

    it("goes on after a failed load; a load that works clears that line, not a change's", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      const answers: (string | Error)[] = [new HttpError(503, "down"), "up"];
      const load = () => {
        const next = answers.shift() ?? "still up";
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
      };
      const poll: Poll<string> = { every: 100 };
      const { result } = renderHook(() => useResource(load, "it", { poll }), { wrapper });
      await pass(0);
      expect(result.current.error).toMatch(/^Could not load it: .*down/);
      await pass(100);
      expect(result.current.data).toBe("up");
      expect(result.current.error).toBeNull();
      await act(async () => {
        await result.current.act("save it", () => Promise.reject(new HttpError(409, "taken")));
      });
      await pass(100);
      expect(result.current.data).toBe("still up");
      expect(result.current.error).toMatch(/^Could not save it: .*taken/);
    });

    it("stops when the page goes", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      let loads = 0;
      const load = () => Promise.resolve((loads += 1));
      const poll: Poll<number> = { every: 100 };
      const { unmount } = renderHook(() => useResource(load, "it", { poll }), { wrapper });
      await pass(250);
      expect(loads).toBe(3);
      unmount();
      await pass(10_000);
      expect(loads).toBe(3);
    });
  });
});
