// @vitest-environment node
import type { Thread } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { contentText, toolResultText } from "./content";
import { formatBytes, formatCount } from "./format";
import { modelLabel } from "./models";
import { pathForThread, threadIdFromPath } from "./route";
import { filterThreads, sortThreads, threadTitle } from "./threads";
import { normalizeTodos, todoProgress } from "./todos";

const ID = "0190a7c2-1b2c-7d3e-8f40-123456789abc";

describe("route", () => {
  it("round-trips thread ids and rejects junk", () => {
    expect(threadIdFromPath(pathForThread(ID))).toBe(ID);
    expect(threadIdFromPath(`/t/${ID}/`)).toBe(ID);
    expect(threadIdFromPath("/")).toBeNull();
    expect(threadIdFromPath("/t/not-a-uuid")).toBeNull();
    expect(pathForThread(null)).toBe("/");
  });
});

const thread = (metadata: Record<string, unknown>, values: unknown, updated = "2024-01-01T00:00:00Z") =>
  ({ thread_id: ID, metadata, values, updated_at: updated }) as unknown as Thread;

describe("threads", () => {
  it("prefers a rename, then the agent title, then the first message", () => {
    expect(threadTitle(thread({ title: "Mine" }, { title: "Agent's" }))).toBe("Mine");
    expect(threadTitle(thread({}, { title: "Agent's" }))).toBe("Agent's");
    expect(threadTitle(thread({}, { messages: [{ type: "human", content: "hello there" }] }))).toBe("hello there");
    expect(threadTitle(thread({}, null))).toBe("New chat");
    expect(threadTitle(thread({}, { messages: [{ type: "human", content: "x".repeat(100) }] }))).toHaveLength(58);
  });

  it("filters by all words, case-insensitively, and sorts newest first", () => {
    const a = thread({}, { title: "Trip to Lisbon" }, "2024-01-01T00:00:00Z");
    const b = thread({}, { title: "SQLite report" }, "2024-02-01T00:00:00Z");
    expect(filterThreads([a, b], "lisbon TRIP")).toEqual([a]);
    expect(filterThreads([a, b], "  ")).toEqual([a, b]);
    expect(sortThreads([a, b])).toEqual([b, a]);
  });
});

describe("todos", () => {
  it("keeps valid entries and defaults unknown statuses", () => {
    const todos = normalizeTodos([{ content: "a", status: "completed" }, { content: "b", status: "weird" }, { nope: 1 }]);
    expect(todos).toEqual([
      { content: "a", status: "completed" },
      { content: "b", status: "pending" },
    ]);
    expect(todoProgress(todos)).toEqual({ done: 1, total: 2 });
    expect(normalizeTodos("x")).toEqual([]);
  });
});

describe("format and content", () => {
  it("formats sizes and counts", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(50 * 1024 * 1024)).toBe("50 MB");
    expect(formatCount(12345)).toBe("12,345");
  });

  it("reads text from block content", () => {
    expect(contentText([{ type: "text", text: "a" }, { type: "image_url", image_url: "x" }, { type: "text", text: "b" }])).toBe("ab");
    expect(contentText(undefined)).toBe("");
    expect(toolResultText("[1,2")).toBe("[1,2");
  });

  it("labels the demo model", () => {
    expect(modelLabel({ name: "demo", display_name: "Offline", is_demo: true })).toBe("Offline (offline demo)");
    expect(modelLabel({ name: "demo", display_name: "Offline demo model", is_demo: true })).toBe("Offline demo model");
    expect(modelLabel({ name: "gpt", display_name: "", is_demo: false })).toBe("gpt");
  });
});
