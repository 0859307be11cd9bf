// @vitest-environment node
import { describe, expect, it } from "vitest";
import { artifactKind, artifactUrl, codeLanguage, fileName, normalizeArtifacts, relativeArtifactPath } from "./artifacts";

describe("artifacts", () => {
  it("classifies files for preview", () => {
    expect(artifactKind("/mnt/user-data/outputs/report.md")).toBe("markdown");
    expect(artifactKind("a/b.py")).toBe("code");
    expect(artifactKind("x.PNG")).toBe("image");
    expect(artifactKind("doc.pdf")).toBe("pdf");
    expect(artifactKind("page.html")).toBe("html");
    expect(artifactKind("icon.svg")).toBe("code");
    expect(artifactKind("notes.txt")).toBe("text");
    expect(artifactKind("birds.csv")).toBe("table");
    expect(artifactKind("birds.TSV")).toBe("table");
    expect(artifactKind("flow.mmd")).toBe("mermaid");
    expect(artifactKind("Dockerfile")).toBe("code");
    expect(artifactKind("archive.zip")).toBe("binary");
    expect(codeLanguage("main.rs")).toBe("rust");
  });

  it("builds artifact URLs relative to /mnt/user-data with encoded segments", () => {
    expect(relativeArtifactPath("/mnt/user-data/outputs/my report.md")).toBe("outputs/my%20report.md");
    expect(relativeArtifactPath("/mnt/user-data/outputs/../../etc/passwd")).toBe("outputs/etc/passwd");
    expect(artifactUrl("t-1", "/mnt/user-data/outputs/a.md")).toBe("/api/threads/t-1/artifacts/outputs/a.md");
    expect(fileName("/mnt/user-data/outputs/a.md")).toBe("a.md");
  });

  it("normalizes the artifacts list", () => {
    expect(normalizeArtifacts(["/a", "/a", 3, "", "/b"])).toEqual(["/a", "/b"]);
    expect(normalizeArtifacts(null)).toEqual([]);
  });
});
