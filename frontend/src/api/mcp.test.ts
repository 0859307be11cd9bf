import { describe, expect, it } from "vitest";
import { formatPairs, parsePairs } from "./mcp";

describe("MCP env/header lines", () => {
  it("parses KEY=value and Name: value lines, keeping masks and references", () => {
    expect(parsePairs("A=1\n\n B = ${TOKEN} \nC=***", "=")).toEqual({ A: "1", B: "${TOKEN}", C: "***" });
    expect(parsePairs("Authorization: Bearer x:y", ":")).toEqual({ Authorization: "Bearer x:y" });
  });

  it("refuses a line without a key", () => {
    expect(() => parsePairs("novalue", "=")).toThrow(/KEY=value/);
    expect(() => parsePairs(": v", ":")).toThrow(/Name: value/);
  });

  it("formats back to lines", () => {
    expect(formatPairs({ A: "1", B: "2" }, "=")).toBe("A=1\nB=2");
    expect(formatPairs({ X: "***" }, ":")).toBe("X: ***");
    expect(formatPairs(undefined, "=")).toBe("");
  });
});
