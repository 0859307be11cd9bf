import { Fragment, useEffect, useRef } from "react";
import type { FeedbackState } from "../hooks/useFeedback";
import type { ChatItem } from "../lib/messages";
import { AssistantMessage } from "./AssistantMessage";
import { FeedbackBar } from "./FeedbackBar";
import { HumanMessage } from "./HumanMessage";

interface Props {
  items: ChatItem[];
  isLoading: boolean;
  /** Thumbs under each finished answer (absent: none shown). */
  feedback?: FeedbackState;
}

/** The conversation; sticks to the bottom while the user has not scrolled up. */
export function MessageList({ items, isLoading, feedback }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useEffect(() => {
    const el = ref.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });

  const onScroll = () => {
    const el = ref.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  };

  const lastItem = items[items.length - 1];
  const showPendingAssistant = isLoading && (!lastItem || lastItem.kind === "human");

  return (
    <div className="message-list" ref={ref} onScroll={onScroll} role="log" aria-live="polite" aria-label="Conversation">
      <div className="message-column">
        {items.map((item, i) =>
          item.kind === "human" ? (
            <HumanMessage key={item.id} text={item.text} files={item.files} images={item.images} />
          ) : (
            <Fragment key={item.id}>
              <AssistantMessage parts={item.parts} streaming={isLoading && i === items.length - 1} />
              {feedback && !(isLoading && i === items.length - 1) && <AnswerFeedback item={item} feedback={feedback} />}
            </Fragment>
          ),
        )}
        {showPendingAssistant && <AssistantMessage parts={[]} streaming />}
      </div>
    </div>
  );
}

function AnswerFeedback({ item, feedback }: { item: Extract<ChatItem, { kind: "assistant" }>; feedback: FeedbackState }) {
  const last = item.parts[item.parts.length - 1];
  const runId = last ? feedback.runOf(last.id) : null;
  if (!runId) return null;
  return (
    <FeedbackBar
      feedback={feedback.ratingOf(runId)}
      onRate={(rating, comment) => feedback.rate(runId, rating, comment)}
      onClear={() => feedback.clear(runId)}
    />
  );
}
