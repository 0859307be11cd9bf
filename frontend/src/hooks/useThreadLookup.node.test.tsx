import { act, renderHook, waitFor } from "@testing-library/react";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../api/client";
import { useThreadLookup } from "./useThreadLookup";

const MINE = "0190a7c2-1b2c-7d3e-8f40-000000000001";
const THEIRS = "0190a7c2-1b2c-7d3e-8f40-000000000002";

// A real server standing in for the gateway's GET /threads/{id}: one thread exists, every
// other id is a 404 (what the gateway answers for another user's thread).
let server: Server;
let origin = "";
const asked: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(req.url ?? "");
    const found = req.url === `/api/langgraph/threads/${MINE}`;
    res.writeHead(found ? 200 : 404, { "Content-Type": "application/json" });
    res.end(JSON.stringify(found ? { thread_id: MINE, metadata: {}, status: "idle", values: null } : { detail: "Thread not found" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("useThreadLookup", () => {
  it("finds an existing thread and reports a 404 as missing", async () => {
    const client = createClient(undefined, origin);
    const { result, rerender } = renderHook(({ id }) => useThreadLookup(client, id, []), { initialProps: { id: MINE } });
    expect(result.current.availability).toBe("checking");
    await waitFor(() => expect(result.current.availability).toBe("found"));
    rerender({ id: THEIRS });
    await waitFor(() => expect(result.current.availability).toBe("missing"));
  });

  it("needs no request for a new chat or a thread created here", () => {
    const client = createClient(undefined, origin);
    const before = asked.length;
    const { result, rerender } = renderHook(({ id }) => useThreadLookup(client, id, []), {
      initialProps: { id: null as string | null },
    });
    expect(result.current.availability).toBe("none");
    const created = "0190a7c2-1b2c-7d3e-8f40-000000000003";
    act(() => result.current.markKnown(created));
    rerender({ id: created });
    expect(result.current.availability).toBe("found");
    expect(asked.length).toBe(before);
  });
});
