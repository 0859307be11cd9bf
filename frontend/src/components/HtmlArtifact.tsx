import { ARTIFACT_IFRAME_SANDBOX, sandboxedDocument } from "../lib/htmlSandbox";

interface Props {
  html: string;
  title: string;
}

/**
 * An HTML artifact, run in a frame with `sandbox="allow-scripts"` (no allow-same-origin: an
 * opaque origin with no cookies, storage or same-origin requests; no top navigation, popups
 * or forms) and a strict CSP in the document itself (no network at all).
 */
export function HtmlArtifact({ html, title }: Props) {
  return (
    <iframe
      className="artifact-frame"
      data-testid="html-artifact"
      title={title}
      sandbox={ARTIFACT_IFRAME_SANDBOX}
      srcDoc={sandboxedDocument(html)}
      referrerPolicy="no-referrer"
    />
  );
}
