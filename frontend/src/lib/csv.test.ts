import { describe, expect, it } from "vitest";
import { parseDelimited } from "./csv";

describe("parseDelimited", () => {
  it("reads quoted fields, doubled quotes and CRLF", () => {
    const text = 'name,note\r\n"Otter, river","said ""hi"""\r\nVole,\n';
    expect(parseDelimited(text, ",", 100)).toEqual({
      rows: [["name", "note"], ["Otter, river", 'said "hi"'], ["Vole", ""]],
      more: false,
    });
  });

  it("reads tabs and stops at maxRows", () => {
    expect(parseDelimited("a\tb\n1\t2\n3\t4\n", "\t", 2)).toEqual({ rows: [["a", "b"], ["1", "2"]], more: true });
  });

  it("keeps a newline inside quotes", () => {
    expect(parseDelimited('a,"x\ny"\n', ",", 10).rows).toEqual([["a", "x\ny"]]);
  });
});
