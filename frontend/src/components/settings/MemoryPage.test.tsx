import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { GatewayContext } from "../../api/gateway";
import type { Fetch } from "../../api/http";
import type { Fact, MemoryDocument } from "../../api/memory";
import { MemoryPage } from "./MemoryPage";

const fact = (id: string, content: string): Fact => ({
  id,
  content,
  category: "preference",
  confidence: 0.9,
  createdAt: "2026-01-01T00:00:00Z",
  updatedAt: "2026-01-01T00:00:00Z",
  source: "manual",
});

/** A tiny in-memory /api/memory that records what the page sends. */
function fakeGateway(facts: Fact[], refuseAdds = false) {
  const calls: { method: string; url: string; body: unknown }[] = [];
  const none = { summary: "", updatedAt: "" };
  const doc = (): MemoryDocument => ({
    version: "1.0",
    lastUpdated: "",
    revision: 1,
    agentName: null,
    user: {
      workContext: { summary: "Builds gateways.", updatedAt: "" },
      personalContext: none,
      topOfMind: none,
    },
    history: { recentMonths: { summary: "Moved teams.", updatedAt: "" }, earlierContext: none, longTermBackground: none },
    facts,
  });
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
  const fetch: Fetch = (input, init) => {
    const url = String(input);
    const method = init?.method ?? "GET";
    const body = init?.body ? (JSON.parse(String(init.body)) as unknown) : undefined;
    calls.push({ method, url, body });
    if (url === "/api/memory/status") return Promise.resolve(json({ enabled: true, mode: "middleware", queue_depth: 0, queued_for_user: 0, in_flight: 0, last_update_at: null, last_error: null, last_error_at: null }));
    if (url === "/api/memory" && method === "GET") return Promise.resolve(json(doc()));
    if (url === "/api/memory/facts" && method === "POST" && !refuseAdds) {
      facts = [...facts, fact(`f${facts.length + 1}`, (body as { content: string }).content)];
      return Promise.resolve(json(doc(), 201));
    }
    if (url.startsWith("/api/memory/facts/") && method === "DELETE") {
      const id = decodeURIComponent(url.split("/").pop() ?? "");
      facts = facts.filter((f) => f.id !== id);
      return Promise.resolve(json(doc()));
    }
    return Promise.resolve(json({ detail: "The same fact is already remembered" }, 422));
  };
  return { gateway: { client: {} as Client, fetch }, calls };
}

describe("MemoryPage", () => {
  it("shows summaries and facts, adds one and deletes one after a confirm", async () => {
    const { gateway, calls } = fakeGateway([fact("f1", "Likes tea")]);
    render(
      <GatewayContext.Provider value={gateway}>
        <MemoryPage onOpenSidebar={() => {}} />
      </GatewayContext.Provider>,
    );
    expect(await screen.findByText("Likes tea")).toBeInTheDocument();
    expect(screen.getByTestId("summary-workContext")).toHaveTextContent("Builds gateways.");
    expect(screen.getByTestId("summary-recentMonths")).toHaveTextContent("Moved teams.");
    expect(screen.queryByTestId("summary-earlierContext")).toBeNull(); // empty history is not shown

    const user = userEvent.setup();
    await user.type(screen.getByLabelText("Fact"), "Uses Vim");
    await user.click(screen.getByRole("button", { name: "Add fact" }));
    expect(await screen.findByText("Uses Vim")).toBeInTheDocument();
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({ content: "Uses Vim", category: "preference" });

    await user.click(screen.getByRole("button", { name: "Delete Likes tea" }));
    const row = screen.getAllByTestId("memory-fact")[0];
    if (!row) throw new Error("no fact row");
    await user.click(within(row).getByRole("button", { name: "Delete" }));
    await screen.findByText("Facts (1)");
    expect(screen.queryByText("Likes tea")).not.toBeInTheDocument();
  });

  it("shows the server's reason when an add is refused", async () => {
    const { gateway } = fakeGateway([], true);
    render(
      <GatewayContext.Provider value={gateway}>
        <MemoryPage onOpenSidebar={() => {}} />
      </GatewayContext.Provider>,
    );
    await screen.findByText("No facts remembered yet.");
    const user = userEvent.setup();
    await user.selectOptions(screen.getByLabelText("Category"), "goal");
    await user.type(screen.getByLabelText("Fact"), "Duplicate");
    await user.click(screen.getByRole("button", { name: "Add fact" }));
    expect(await screen.findByText(/already remembered/)).toBeInTheDocument();
  });
});
