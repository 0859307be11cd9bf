import { useEffect, useState } from "react";
import { useGateway } from "../api/gateway";
import { fetchArtifactText } from "../api/rest";
import { artifactKind, codeLanguage, fileName } from "../lib/artifacts";
import { describeError } from "../lib/errors";
import { CodeBlock } from "./CodeBlock";
import { Markdown } from "./LazyMarkdown";

interface Props {
  path: string;
  url: string;
}

type Loaded = { url: string; text: string } | { url: string; error: string };

/** Preview one artifact: markdown rendered, code/text/HTML as highlighted source, images inline, PDF as a link. */
export function ArtifactPreview({ path, url }: Props) {
  const { fetch } = useGateway();
  const kind = artifactKind(path);
  const needsText = kind === "markdown" || kind === "code" || kind === "text" || kind === "html";
  const [loaded, setLoaded] = useState<Loaded | null>(null);

  useEffect(() => {
    if (!needsText) return;
    const controller = new AbortController();
    fetchArtifactText(fetch, url, 1024 * 1024, controller.signal)
      .then((text) => setLoaded({ url, text }))
      .catch((e: unknown) => {
        if (!controller.signal.aborted) setLoaded({ url, error: describeError(e) });
      });
    return () => controller.abort();
  }, [fetch, url, needsText]);

  if (kind === "image") return <img className="artifact-image" src={url} alt={fileName(path)} />;
  if (kind === "pdf") {
    return (
      <p className="artifact-note">
        <a href={url} target="_blank" rel="noopener noreferrer">Open {fileName(path)} (PDF) in a new tab</a>
      </p>
    );
  }
  if (kind === "binary") return <p className="artifact-note">No preview for this file type. Use Download.</p>;

  const current = loaded && loaded.url === url ? loaded : null;
  if (!current) return <p className="artifact-note">Loading…</p>;
  if ("error" in current) return <p className="artifact-note error-text">Could not load: {current.error}</p>;
  if (kind === "markdown") return <Markdown text={current.text} />;
  if (kind === "html") return <CodeBlock code={current.text} language="xml" />;
  return <CodeBlock code={current.text} language={kind === "code" ? codeLanguage(path) : undefined} />;
}
