import type { AssistantPart } from "../lib/messages";
import { Markdown } from "./LazyMarkdown";
import { Reasoning } from "./Reasoning";
import { SubagentCard } from "./SubagentCard";
import { ToolCallCard } from "./ToolCallCard";

interface Props {
  parts: AssistantPart[];
  /** This block is the one currently streaming. */
  streaming: boolean;
}

/** One assistant turn: reasoning, text, tool cards, in message order. */
export function AssistantMessage({ parts, streaming }: Props) {
  const last = parts.length - 1;
  return (
    <div className="message message-assistant" data-testid="message-assistant" aria-busy={streaming}>
      {parts.map((part, i) => (
        <div key={part.id} className="assistant-part">
          {part.reasoning && <Reasoning text={part.reasoning} streaming={streaming && i === last && !part.text} />}
          {part.isError ? (
            <div className="error-notice" role="alert" data-testid="error-fallback">
              <strong>Error</strong>
              <span className="error-notice-text">{part.text || "The model failed to answer."}</span>
            </div>
          ) : (
            part.text && <Markdown text={part.text} />
          )}
          {part.toolCalls.map((call) =>
            call.name === "task" ? <SubagentCard key={call.id} call={call} /> : <ToolCallCard key={call.id} call={call} />,
          )}
          {part.stopped && (
            <p className="stopped-note" data-testid="stopped-note">
              Stopped — this answer was cut off and is not kept in the chat.
            </p>
          )}
        </div>
      ))}
      {streaming && parts.length === 0 && (
        <div className="typing" aria-label="Assistant is thinking">
          <span />
          <span />
          <span />
        </div>
      )}
    </div>
  );
}
