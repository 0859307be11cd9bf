import { describe, expect, it } from "vitest";
import { ARTIFACT_HTML_CSP, sandboxedDocument } from "./htmlSandbox";

describe("sandboxedDocument", () => {
  it("puts the CSP before the artifact's markup", () => {
    const doc = sandboxedDocument("<script>fetch('/api')</script>");
    expect(doc.startsWith('<!doctype html><meta http-equiv="Content-Security-Policy"')).toBe(true);
    expect(doc.indexOf("connect-src 'none'")).toBeLessThan(doc.indexOf("<script>"));
  });

  it("keeps the artifact's doctype first", () => {
    const doc = sandboxedDocument("<!DOCTYPE html><html><head></head></html>");
    expect(doc.startsWith("<!DOCTYPE html><meta")).toBe(true);
  });

  it("allows no network", () => {
    expect(ARTIFACT_HTML_CSP).toContain("default-src 'none'");
    expect(ARTIFACT_HTML_CSP).not.toMatch(/'self'|https?:|\*/);
  });
});
