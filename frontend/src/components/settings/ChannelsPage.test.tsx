import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import type { ChannelSection, ChannelStatus, Connection } from "../../api/channels";
import { GatewayContext } from "../../api/gateway";
import type { Fetch } from "../../api/http";
import { ChannelsPage } from "./ChannelsPage";

const counts = { received: 3, replied: 2, duplicates: 0, refused: 1, dropped_busy: 0, errors: 0, files_in: 0, files_out: 0 };

const section = (name: string, config: Record<string, unknown>, configured = true): ChannelSection => ({
  name,
  configured,
  config,
  secrets: ["bot_token"],
  schema: {
    required: ["bot_token"],
    properties: {
      enabled: { type: "boolean", default: true },
      bot_token: { type: "string", format: "password" },
      api_base_url: { type: "string", default: "https://api.example" },
      poll_timeout_s: { type: "integer", default: 30 },
    },
  },
});

/** A connection as the gateway lists it (ours and DeerFlow's names of the same). */
function connection(id: string, externalId: string, name: string, createdAt: string): Connection {
  return {
    id,
    channel: "telegram",
    external_id: externalId,
    external_name: name,
    owner_id: "u",
    created_at: createdAt,
    provider: "telegram",
    status: "active",
    external_account_id: externalId,
    external_account_name: name,
    workspace_id: null,
    workspace_name: null,
    scopes: [],
    metadata: {},
  };
}

/** An in-memory /api/channels that records what the page sends. */
function fakeGateway(opts: { admin?: boolean; statuses?: ChannelStatus[]; connections?: Connection[] } = {}) {
  const calls: { method: string; url: string; body: unknown }[] = [];
  let sections = [section("telegram", {}, false), section("slack", { bot_token: "***", enabled: true })];
  let statuses: ChannelStatus[] = opts.statuses ?? [
    { name: "slack", enabled: true, running: false, standby: true, last_error: "auth.test: HTTP 401", starts: 1, counts },
  ];
  let connections: Connection[] = opts.connections ?? [];
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
  const fetch: Fetch = (input, init) => {
    const url = String(input);
    const method = init?.method ?? "GET";
    const body = init?.body ? (JSON.parse(String(init.body)) as unknown) : undefined;
    calls.push({ method, url, body });
    if (url === "/api/channels" && method === "GET") return Promise.resolve(json(statuses));
    if (url === "/api/channels/connections" && method === "GET") return Promise.resolve(json({ connections }));
    if (url === "/api/channels/config" && method === "GET") {
      return Promise.resolve(opts.admin === false ? json({ detail: "Admins only" }, 403) : json({ channels: sections, source_path: "/srv/config.yaml", writable: true }));
    }
    const put = /^\/api\/channels\/(\w+)\/config$/.exec(url);
    if (put && method === "PUT") {
      const name = put[1] ?? "";
      const config = (body as { config: Record<string, unknown> }).config;
      sections = sections.map((s) => (s.name === name ? { ...s, configured: true, config: { ...config, bot_token: "***" } } : s));
      statuses = [...statuses.filter((s) => s.name !== name), { name, enabled: config.enabled !== false, running: config.enabled !== false, standby: false, last_error: null, starts: 1, counts }];
      return Promise.resolve(json({ channels: sections, source_path: "/srv/config.yaml", writable: true }));
    }
    if (url === "/api/channels/telegram/connect" && method === "POST") {
      const expires = new Date(Date.now() + 10 * 60000).toISOString();
      return Promise.resolve(json({ channel: "telegram", code: "C0DE", command: "/connect C0DE", expires_at: expires, deep_link: "https://t.me/pronghorn_bot?start=C0DE" }));
    }
    if (url.startsWith("/api/channels/connections/") && method === "DELETE") {
      const id = decodeURIComponent(url.split("/").pop() ?? "");
      connections = connections.filter((c) => c.id !== id);
      return Promise.resolve(new Response(null, { status: 204 }));
    }
    if (url === "/api/channels/slack/restart" && method === "POST") return Promise.resolve(json(statuses[0]));
    return Promise.resolve(json({ detail: "not found" }, 404));
  };
  const link = (c: Connection) => {
    connections = [...connections, c];
  };
  return { gateway: { client: {} as Client, fetch }, calls, link };
}

function renderPage(gateway: ReturnType<typeof fakeGateway>["gateway"], isAdmin = true) {
  return render(
    <GatewayContext.Provider value={gateway}>
      <ChannelsPage isAdmin={isAdmin} onOpenSidebar={() => {}} />
    </GatewayContext.Provider>,
  );
}

describe("ChannelsPage", () => {
  it("shows each platform's state, error and counts", async () => {
    const { gateway } = fakeGateway();
    renderPage(gateway);
    const slack = await screen.findByRole("article", { name: "Channel Slack" });
    await waitFor(() => expect(within(slack).getByTestId("channel-state")).toHaveTextContent("standby"));
    expect(within(slack).getByTestId("channel-error")).toHaveTextContent("auth.test: HTTP 401");
    expect(within(slack).getByTestId("channel-counts")).toHaveTextContent("3 received · 2 replied · 1 refused · 0 errors");
    const telegram = screen.getByRole("article", { name: "Channel Telegram" });
    expect(within(telegram).getByTestId("channel-state")).toHaveTextContent("not set up");
    expect(within(telegram).queryByText("Connect my account")).toBeNull();
  });

  it("sets a platform up from its schema without revealing the stored secret", async () => {
    const { gateway, calls } = fakeGateway();
    renderPage(gateway);
    const user = userEvent.setup();
    const telegram = await screen.findByRole("article", { name: "Channel Telegram" });
    await user.click(within(telegram).getByRole("button", { name: "Set up" }));
    const form = screen.getByRole("form", { name: "Telegram settings" });
    const token = within(form).getByLabelText(/Bot token/);
    expect(token).toHaveAttribute("type", "password");
    await user.type(token, "123:secret");
    await user.click(within(form).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.queryByRole("form")).toBeNull());
    const put = calls.find((c) => c.method === "PUT");
    expect(put?.url).toBe("/api/channels/telegram/config");
    expect(put?.body).toEqual({ config: { bot_token: "123:secret", enabled: true } });
    await waitFor(() => expect(within(telegram).getByTestId("channel-state")).toHaveTextContent("running"));

    // editing again: the secret field starts empty, and saving keeps the stored one
    await user.click(within(telegram).getByRole("button", { name: "Settings" }));
    const again = screen.getByRole("form", { name: "Telegram settings" });
    const stored = within(again).getByLabelText(/Bot token/);
    expect(stored).toHaveValue("");
    expect(stored).toHaveAttribute("placeholder", "*** stored — type to replace");
    await user.type(within(again).getByLabelText(/Poll timeout/), "5");
    await user.click(within(again).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(calls.filter((c) => c.method === "PUT")).toHaveLength(2));
    expect(calls.filter((c) => c.method === "PUT")[1]?.body).toEqual({ config: { bot_token: "***", enabled: true, poll_timeout_s: 5 } });
  });

  it("toggles a channel off and restarts one", async () => {
    const { gateway, calls } = fakeGateway();
    renderPage(gateway);
    const user = userEvent.setup();
    const slack = await screen.findByRole("article", { name: "Channel Slack" });
    await user.click(within(slack).getByRole("button", { name: "Restart" }));
    await waitFor(() => expect(calls.some((c) => c.method === "POST" && c.url === "/api/channels/slack/restart")).toBe(true));
    await user.click(within(slack).getByLabelText("Enable Slack"));
    await waitFor(() => expect(calls.some((c) => c.method === "PUT")).toBe(true));
    expect(calls.find((c) => c.method === "PUT")?.body).toEqual({ config: { bot_token: "***", enabled: false } });
  });

  it("gets a connect code with the message to send and the Telegram link, and revokes a connection", async () => {
    const { gateway, calls, link } = fakeGateway({
      admin: false,
      statuses: [{ name: "telegram", enabled: true, running: true, standby: false, last_error: null, starts: 1 }],
      connections: [connection("b1", "42", "alice", "2026-12-01T10:00:00Z")],
    });
    renderPage(gateway, false);
    const user = userEvent.setup();
    const telegram = await screen.findByRole("article", { name: "Channel Telegram" });
    expect(within(telegram).queryByRole("button", { name: /Set up|Settings|Restart/ })).toBeNull(); // not an admin
    await user.click(within(telegram).getByRole("button", { name: "Connect my account" }));
    expect(await within(telegram).findByTestId("connect-command")).toHaveTextContent("/connect C0DE");
    expect(within(telegram).getByTestId("connect-link")).toHaveAttribute("href", "https://t.me/pronghorn_bot?start=C0DE");
    expect(within(telegram).getByTestId("connect-code")).toHaveTextContent("within 10 minutes");
    // the code is used (the next status poll sees a new connection): the box says so
    link(connection("b2", "43", "bob", "2026-12-01T11:00:00Z"));
    expect(await within(telegram).findByTestId("connected-note", {}, { timeout: 5000 })).toHaveTextContent("Connected as bob");
    expect(within(telegram).queryByTestId("connect-code")).toBeNull();

    const row = await screen.findByRole("row", { name: /alice \(42\)/ });
    await user.click(within(row).getByRole("button", { name: "Revoke Telegram alice" }));
    await user.click(within(row).getByRole("button", { name: "Revoke" }));
    await waitFor(() => expect(screen.queryByRole("row", { name: /alice/ })).toBeNull());
    expect(calls.some((c) => c.method === "DELETE" && c.url === "/api/channels/connections/b1")).toBe(true);
    expect(calls.some((c) => c.url === "/api/channels/config")).toBe(false); // never asked as a non-admin
  });
});
