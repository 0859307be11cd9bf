import { useState } from "react";
import { artifactUrl, fileName } from "../lib/artifacts";
import { ArtifactPreview } from "./ArtifactPreview";
import "../styles/chat.css";

interface Props {
  threadId: string;
  artifacts: string[];
  onClose: () => void;
}

/** Files the agent presented: a list, a preview of the chosen one, and download links. */
export function ArtifactsPanel({ threadId, artifacts, onClose }: Props) {
  const [chosen, setChosen] = useState<string | null>(null);
  const active = chosen && artifacts.includes(chosen) ? chosen : (artifacts[artifacts.length - 1] ?? null);

  return (
    <aside className="artifacts-panel" aria-label="Artifacts">
      <header className="panel-header">
        <h2>Artifacts</h2>
        <button type="button" className="icon-button" aria-label="Close artifacts" onClick={onClose}>
          ×
        </button>
      </header>
      {artifacts.length === 0 ? (
        <p className="artifact-note">Files the assistant creates will appear here.</p>
      ) : (
        <>
          <ul className="artifact-list">
            {artifacts.map((path) => (
              <li key={path} className={path === active ? "active" : undefined}>
                <button type="button" className="artifact-name" onClick={() => setChosen(path)} aria-current={path === active}>
                  {fileName(path)}
                </button>
                <a
                  className="chip-button"
                  href={artifactUrl(threadId, path)}
                  download={fileName(path)}
                  aria-label={`Download ${fileName(path)}`}
                >
                  Download
                </a>
              </li>
            ))}
          </ul>
          {active && (
            <div className="artifact-preview" data-testid="artifact-preview">
              <div className="artifact-path" title={active}>{active}</div>
              <ArtifactPreview path={active} url={artifactUrl(threadId, active)} />
            </div>
          )}
        </>
      )}
    </aside>
  );
}
