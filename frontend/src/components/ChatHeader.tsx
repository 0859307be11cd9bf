import type { Budget } from "../api/governance";
import type { TokenUsage } from "../api/rest";
import { TokenUsageBadge } from "./TokenUsageBadge";

interface Props {
  title: string;
  usage: TokenUsage | null;
  budget?: Budget | null;
  artifactCount: number;
  artifactsOpen: boolean;
  onToggleArtifacts: () => void;
  onOpenSidebar: () => void;
}

export function ChatHeader({ title, usage, budget = null, artifactCount, artifactsOpen, onToggleArtifacts, onOpenSidebar }: Props) {
  return (
    <header className="chat-header">
      <button type="button" className="icon-button menu-button" aria-label="Open chat list" onClick={onOpenSidebar}>
        ☰
      </button>
      <h1 className="chat-title" title={title}>{title}</h1>
      <TokenUsageBadge usage={usage} budget={budget} />
      <button
        type="button"
        className="chip-button"
        aria-pressed={artifactsOpen}
        onClick={onToggleArtifacts}
      >
        Artifacts{artifactCount > 0 ? ` · ${artifactCount}` : ""}
      </button>
    </header>
  );
}
