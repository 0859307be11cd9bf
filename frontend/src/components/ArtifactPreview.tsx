import { lazy, Suspense } from "react";
import { PREVIEW_PIECE_BYTES, useArtifactText } from "../hooks/useArtifactText";
import { artifactKind, codeLanguage, fileName, tableSeparator } from "../lib/artifacts";
import { formatBytes } from "../lib/format";
import { CodeBlock } from "./CodeBlock";
import { HtmlArtifact } from "./HtmlArtifact";
import { Markdown } from "./LazyMarkdown";
import { TableArtifact } from "./TableArtifact";

const MermaidArtifact = lazy(() => import("./MermaidArtifact"));

/** HTML runs whole or not at all: bigger pages are offered as a download. */
const HTML_MAX_BYTES = 2 * 1024 * 1024;

interface Props {
  path: string;
  url: string;
}

/**
 * Preview one artifact: markdown rendered, HTML run in a sandboxed frame, Mermaid drawn, CSV/TSV
 * as a table, code highlighted, images and PDFs inline; anything else is a download. Text is
 * loaded in bounded pieces (Range requests) with "Load more".
 */
export function ArtifactPreview({ path, url }: Props) {
  const kind = artifactKind(path);
  const name = fileName(path);
  const needsText = kind !== "image" && kind !== "pdf" && kind !== "binary";
  const loaded = useArtifactText(url, needsText, kind === "html" ? HTML_MAX_BYTES : PREVIEW_PIECE_BYTES);

  if (kind === "image") return <img className="artifact-image" src={url} alt={name} />;
  if (kind === "pdf") {
    return (
      <>
        <iframe className="artifact-frame artifact-pdf" data-testid="pdf-artifact" title={name} src={url} />
        <p className="artifact-note">
          <a href={url} target="_blank" rel="noopener noreferrer">Open {name} in a new tab</a>
        </p>
      </>
    );
  }
  if (kind === "binary") return <p className="artifact-note">No preview for this file type. Use Download.</p>;

  if (loaded.error) return <p className="artifact-note error-text">Could not load: {loaded.error}</p>;
  if (loaded.text === null) return <p className="artifact-note">Loading…</p>;
  const text = loaded.text;

  if (kind === "html") {
    if (loaded.more) {
      return (
        <p className="artifact-note">
          This page is too large to preview ({formatBytes(loaded.totalBytes ?? 0)}, over {formatBytes(HTML_MAX_BYTES)}). Use Download.
        </p>
      );
    }
    return <HtmlArtifact html={text} title={`${name} (sandboxed preview)`} />;
  }

  const body = (() => {
    switch (kind) {
      case "markdown":
        return <Markdown text={text} />;
      case "table":
        return <TableArtifact text={text} separator={tableSeparator(path)} partial={loaded.more} />;
      case "mermaid":
        return loaded.more ? (
          <CodeBlock code={text} />
        ) : (
          <Suspense fallback={<p className="artifact-note">Loading the diagram renderer…</p>}>
            <MermaidArtifact source={text} />
          </Suspense>
        );
      default:
        return <CodeBlock code={text} language={kind === "code" ? codeLanguage(path) : undefined} />;
    }
  })();

  return (
    <>
      {body}
      {loaded.more && (
        <div className="artifact-more" data-testid="artifact-more">
          <span>
            Showing {formatBytes(loaded.loadedBytes)} of {formatBytes(loaded.totalBytes ?? 0)}.
          </span>
          <button type="button" className="chip-button" onClick={loaded.loadMore} disabled={loaded.loading}>
            {loaded.loading ? "Loading…" : "Load more"}
          </button>
        </div>
      )}
    </>
  );
}
