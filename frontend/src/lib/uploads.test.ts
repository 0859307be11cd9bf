// @vitest-environment node
import { describe, expect, it } from "vitest";
import { checkUploads, DEFAULT_UPLOAD_LIMITS, limitsFromResponse } from "./uploads";

const MB = 1024 * 1024;

describe("checkUploads", () => {
  const limits = { maxFileBytes: 10 * MB, maxTotalBytes: 15 * MB };

  it("rejects files over the per-file limit and empty files", () => {
    const res = checkUploads([{ name: "big.bin", size: 11 * MB }, { name: "empty", size: 0 }, { name: "ok.txt", size: 10 }], 0, limits);
    expect(res.accepted.map((f) => f.name)).toEqual(["ok.txt"]);
    expect(res.rejected.map((r) => r.reason)).toEqual([
      "big.bin is 11 MB; the limit is 10 MB per file",
      "empty is empty",
    ]);
  });

  it("counts bytes already on the thread towards the total", () => {
    const res = checkUploads([{ name: "a", size: 6 * MB }, { name: "b", size: 6 * MB }], 4 * MB, limits);
    expect(res.accepted.map((f) => f.name)).toEqual(["a"]);
    expect(res.rejected[0]?.reason).toBe("b would exceed the 15 MB total for this chat");
  });
});

describe("limitsFromResponse", () => {
  it("reads limits when present and falls back otherwise", () => {
    expect(limitsFromResponse({ files: [], limits: { max_file_bytes: 5, max_total_bytes: 9 } })).toEqual({
      maxFileBytes: 5,
      maxTotalBytes: 9,
    });
    expect(limitsFromResponse({ files: [] })).toEqual(DEFAULT_UPLOAD_LIMITS);
    expect(limitsFromResponse(null)).toEqual(DEFAULT_UPLOAD_LIMITS);
  });
});
