import { describe, expect, it } from "vitest";
import { parseExportFile } from "./memory";

describe("memory export files", () => {
  it("accepts an export and explains what is wrong with anything else", () => {
    expect(parseExportFile('{"version": 1, "facts": []}')).toEqual({ doc: { version: 1, facts: [] } });
    expect(parseExportFile("not json")).toEqual({ error: "That file is not JSON." });
    expect(parseExportFile("[1, 2]")).toEqual({ error: "That file is not a memory export (no facts list)." });
    expect(parseExportFile('{"facts": "x"}')).toEqual({ error: "That file is not a memory export (no facts list)." });
  });
});
