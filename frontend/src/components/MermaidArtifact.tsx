import mermaid from "mermaid";
import { useEffect, useId, useState } from "react";
import { describeError } from "../lib/errors";
import { CodeBlock } from "./CodeBlock";

interface Props {
  source: string;
}

let initialized = false;

/**
 * A Mermaid diagram (this module and mermaid load only when one is shown). `securityLevel:
 * "strict"` makes mermaid sanitise its SVG and drop click handlers and HTML labels.
 */
export default function MermaidArtifact({ source }: Props) {
  const id = `mermaid-${useId().replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const [result, setResult] = useState<{ source: string; svg?: string; error?: string } | null>(null);

  useEffect(() => {
    let live = true;
    if (!initialized) {
      mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "neutral" });
      initialized = true;
    }
    mermaid
      .render(id, source)
      .then(({ svg }) => live && setResult({ source, svg }))
      .catch((e: unknown) => live && setResult({ source, error: describeError(e) }));
    return () => {
      live = false;
    };
  }, [id, source]);

  const current = result?.source === source ? result : null;
  if (!current) return <p className="artifact-note">Drawing the diagram…</p>;
  if (current.error) {
    return (
      <>
        <p className="artifact-note error-text">Could not draw the diagram: {current.error}</p>
        <CodeBlock code={source} />
      </>
    );
  }
  return <div className="artifact-mermaid" data-testid="mermaid-artifact" dangerouslySetInnerHTML={{ __html: current.svg ?? "" }} />;
}
