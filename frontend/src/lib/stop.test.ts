// @vitest-environment node
import type { Message } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { isStopped, keepStoppedMessages } from "./stop";

const msg = (id: string, type: "human" | "ai", content: string): Message => ({ id, type, content }) as Message;

describe("keepStoppedMessages", () => {
  it("appends the partial answer the saved head lacks, marked stopped", () => {
    const head = [msg("h1", "human", "go")];
    const shown = [msg("h1", "human", "go"), msg("a1", "ai", "word1 word2")];
    const kept = keepStoppedMessages(head, shown);
    expect(kept.map((m) => m.id)).toEqual(["h1", "a1"]);
    expect(kept[1]?.content).toBe("word1 word2");
    expect(isStopped(kept[1] as Message)).toBe(true);
    expect(isStopped(kept[0] as Message)).toBe(false);
  });

  it("keeps the head as is when nothing was lost", () => {
    const head = [msg("h1", "human", "go"), msg("a1", "ai", "done")];
    expect(keepStoppedMessages(head, head)).toEqual(head);
  });

  it("keeps an optimistic human message the head does not have yet", () => {
    const kept = keepStoppedMessages([], [msg("h1", "human", "go")]);
    expect(kept.map((m) => m.id)).toEqual(["h1"]);
  });
});
