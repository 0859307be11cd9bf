// @vitest-environment node
import { describe, expect, it } from "vitest";
import { extractClarification } from "./clarification";

describe("extractClarification", () => {
  it("finds a clarification interrupt with options", () => {
    expect(
      extractClarification([{ value: { type: "clarification", question: "Which city?", options: ["Paris", "", 3, "Rome"] } }]),
    ).toEqual({ question: "Which city?", options: ["Paris", "Rome"] });
  });

  it("accepts null options", () => {
    expect(extractClarification([{ value: { type: "clarification", question: "Why?", options: null } }])).toEqual({
      question: "Why?",
      options: [],
    });
  });

  it("ignores other interrupts and empty input", () => {
    expect(extractClarification([{ value: { type: "approval" } }, { value: "text" }, {}])).toBeNull();
    expect(extractClarification(undefined)).toBeNull();
    expect(extractClarification([])).toBeNull();
  });
});
