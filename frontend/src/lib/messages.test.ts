// @vitest-environment node
import type { Message } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { groupMessages, lastHumanText } from "./messages";

const human = (id: string, content: Message["content"], extra: Partial<Message> = {}): Message =>
  ({ id, type: "human", content, ...extra }) as Message;
const ai = (id: string, content: Message["content"], extra: Record<string, unknown> = {}): Message =>
  ({ id, type: "ai", content, ...extra }) as Message;
const tool = (id: string, callId: string, content: string, status?: "error" | "success"): Message =>
  ({ id, type: "tool", tool_call_id: callId, content, name: "bash", status }) as Message;

describe("groupMessages", () => {
  it("puts human messages on their own and groups AI + tool messages into one assistant block", () => {
    const items = groupMessages(
      [
        human("h1", "list files"),
        ai("a1", "", { tool_calls: [{ id: "c1", name: "bash", args: { command: "ls" } }] }),
        tool("t1", "c1", "a.txt\nb.txt"),
        ai("a2", "Two files."),
        human("h2", "thanks"),
      ],
      false,
    );
    expect(items.map((i) => i.kind)).toEqual(["human", "assistant", "human"]);
    const block = items[1];
    if (block?.kind !== "assistant") throw new Error("expected assistant");
    expect(block.parts).toHaveLength(2);
    expect(block.parts[0]?.toolCalls).toEqual([
      { id: "c1", name: "bash", args: { command: "ls" }, status: "done", result: "a.txt\nb.txt" },
    ]);
    expect(block.parts[1]?.text).toBe("Two files.");
  });

  it("names the MCP server of a tool result that carries one", () => {
    const result = {
      ...tool("t1", "c1", "42"),
      name: "fx_add",
      additional_kwargs: { mcp_server: "fx", mcp_tool: "add" },
    } as Message;
    const items = groupMessages(
      [human("h", "add"), ai("a", "", { tool_calls: [{ id: "c1", name: "fx_add", args: {} }] }), result],
      false,
    );
    const block = items[1];
    expect(block?.kind === "assistant" && block.parts[0]?.toolCalls[0]?.server).toBe("fx");
    const plain = groupMessages([human("h", "x"), ai("a", "", { tool_calls: [{ id: "c", name: "bash", args: {} }] }), tool("t", "c", "ok")], false)[1];
    expect(plain?.kind === "assistant" && "server" in (plain.parts[0]?.toolCalls[0] ?? {})).toBe(false);
  });

  it("marks a call without result as running during a run and cancelled after it", () => {
    const msgs = [human("h", "go"), ai("a", "", { tool_calls: [{ id: "c", name: "sleep", args: {} }] })];
    const running = groupMessages(msgs, true)[1];
    const stopped = groupMessages(msgs, false)[1];
    expect(running?.kind === "assistant" && running.parts[0]?.toolCalls[0]?.status).toBe("running");
    expect(stopped?.kind === "assistant" && stopped.parts[0]?.toolCalls[0]?.status).toBe("cancelled");
    const waiting = groupMessages(msgs, false, true)[1];
    expect(waiting?.kind === "assistant" && waiting.parts[0]?.toolCalls[0]?.status).toBe("waiting");
  });

  it("shows a clarifying question's own message as waiting, until it is answered", () => {
    const question = {
      ...tool("q", "c", "Asked the user, waiting for the answer: Which?"),
      name: "ask_clarification",
      artifact: { human_input: { kind: "human_input_request", question: "Which?" } },
    } as Message;
    const msgs = [human("h", "go"), ai("a", "", { tool_calls: [{ id: "c", name: "ask_clarification", args: {} }] }), question];
    const waiting = groupMessages(msgs, false, true);
    expect(waiting).toHaveLength(2);
    const block = waiting[1];
    expect(block?.kind === "assistant" && block.parts.length).toBe(1);
    expect(block?.kind === "assistant" && block.parts[0]?.toolCalls[0]?.status).toBe("waiting");
    // answered by a new message instead of a resume: the question is the call's result
    const later = groupMessages([...msgs, human("h2", "B")], false)[1];
    expect(later?.kind === "assistant" && later.parts[0]?.toolCalls[0]?.status).toBe("done");
  });

  it("marks tool results with status error as errors", () => {
    const items = groupMessages(
      [ai("a", "", { tool_calls: [{ id: "c", name: "bash", args: {} }] }), tool("t", "c", "boom", "error")],
      false,
    );
    const block = items[0];
    expect(block?.kind === "assistant" && block.parts[0]?.toolCalls[0]).toMatchObject({ status: "error", result: "boom" });
  });

  it("pretty-prints JSON tool results", () => {
    const items = groupMessages(
      [ai("a", "", { tool_calls: [{ id: "c", name: "x", args: {} }] }), tool("t", "c", '{"a":1}')],
      false,
    );
    const block = items[0];
    expect(block?.kind === "assistant" && block.parts[0]?.toolCalls[0]?.result).toBe('{\n  "a": 1\n}');
  });

  it("flags error_fallback AI messages as errors", () => {
    const items = groupMessages([ai("a", "Model unavailable", { additional_kwargs: { error_fallback: true } })], false);
    const block = items[0];
    expect(block?.kind === "assistant" && block.parts[0]?.isError).toBe(true);
  });

  it("extracts reasoning from additional_kwargs and content blocks", () => {
    const items = groupMessages(
      [
        ai("a", "answer", { additional_kwargs: { reasoning_content: "hmm" } }),
        ai("b", [{ type: "thinking", thinking: "deep" }, { type: "text", text: "ok" }] as unknown as Message["content"]),
      ],
      false,
    );
    const block = items[0];
    if (block?.kind !== "assistant") throw new Error("expected assistant");
    expect(block.parts[0]).toMatchObject({ text: "answer", reasoning: "hmm" });
    expect(block.parts[1]).toMatchObject({ text: "ok", reasoning: "deep" });
  });

  it("keeps an empty assistant block for an empty first chunk and skips system messages", () => {
    const items = groupMessages(
      [{ id: "s", type: "system", content: "sys" } as Message, human("h", "hi"), ai("a", "")],
      true,
    );
    expect(items).toHaveLength(2);
    expect(items[1]).toEqual({ kind: "assistant", id: "a", parts: [] });
  });

  it("shows an orphan tool result as its own card", () => {
    const items = groupMessages([tool("t", "unknown", "out")], false);
    const block = items[0];
    expect(block?.kind === "assistant" && block.parts[0]?.toolCalls[0]).toMatchObject({ name: "bash", status: "done" });
  });

  it("lists the files attached to a human message and its images", () => {
    const items = groupMessages(
      [
        human(
          "h",
          [
            { type: "text", text: "see" },
            { type: "image_url", image_url: { url: "/img.png" } },
          ],
          { additional_kwargs: { files: [{ name: "a.csv", size: 12, virtual_path: "/mnt/user-data/uploads/a.csv" }, { bad: 1 }] } },
        ),
      ],
      false,
    );
    expect(items[0]).toEqual({
      kind: "human",
      id: "h",
      text: "see",
      images: ["/img.png"],
      files: [{ name: "a.csv", size: 12, virtual_path: "/mnt/user-data/uploads/a.csv", url: undefined }],
    });
  });

  it("gives messages without ids stable index keys", () => {
    const items = groupMessages([{ type: "human", content: "x" } as Message], false);
    expect(items[0]?.id).toBe("idx-0");
  });
});

describe("lastHumanText", () => {
  it("returns the newest human text", () => {
    expect(lastHumanText([human("1", "a"), ai("2", "b"), human("3", "c")])).toBe("c");
    expect(lastHumanText([])).toBe("");
  });
});
