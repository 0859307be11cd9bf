/**
 * The document an HTML artifact runs as: its own markup behind a Content-Security-Policy
 * that allows inline script and style and data:/blob: images only — no network at all
 * (connect, img, frame, form, base, prefetch). The frame itself is sandboxed with only
 * `allow-scripts` (an opaque origin: no cookies, no storage, no same-origin API calls, no
 * top navigation, no popups, no forms).
 */
export const ARTIFACT_HTML_CSP = [
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  "img-src data: blob:",
  "font-src data:",
  "media-src data: blob:",
  "connect-src 'none'",
  "frame-src 'none'",
  "worker-src 'none'",
  "form-action 'none'",
  "base-uri 'none'",
].join("; ");

export const ARTIFACT_IFRAME_SANDBOX = "allow-scripts";

const CSP_META = `<meta http-equiv="Content-Security-Policy" content="${ARTIFACT_HTML_CSP}">`;

/** `html` with the CSP meta first, so it applies before any of the artifact's own markup. */
export function sandboxedDocument(html: string): string {
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  if (doctype) return `${doctype[0]}${CSP_META}${html.slice(doctype[0].length)}`;
  return `<!doctype html>${CSP_META}${html}`;
}
