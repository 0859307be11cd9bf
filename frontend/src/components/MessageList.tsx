import { Fragment, useEffect, useRef, type ReactNode } from "react";
import type { FeedbackState } from "../hooks/useFeedback";
import type { Branching } from "../lib/branching";
import type { ChatItem } from "../lib/messages";
import { AssistantMessage } from "./AssistantMessage";
import { BranchSwitcher } from "./BranchSwitcher";
import { FeedbackBar } from "./FeedbackBar";
import { HumanMessage } from "./HumanMessage";
import { Icon } from "./Icon";

interface Props {
  items: ChatItem[];
  isLoading: boolean;
  /** Thumbs under each finished answer (absent: none shown). */
  feedback?: FeedbackState;
  /** Edit, regenerate and the version switchers (absent: none shown). */
  branching?: Branching;
  /** Shown after the last answer (follow-up suggestions). */
  footer?: ReactNode;
}

/** The conversation; sticks to the bottom while the user has not scrolled up. */
export function MessageList({ items, isLoading, feedback, branching, footer }: Props) {
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
        {items.map((item, i) => {
          const streaming = isLoading && i === items.length - 1;
          if (item.kind === "human") {
            return (
              <HumanMessage
                key={item.id}
                text={item.text}
                files={item.files}
                images={item.images}
                branch={branching?.info(item.id)}
                onSelectBranch={branching?.select}
                onEdit={branching ? (text) => branching.edit(item.id, text) : undefined}
              />
            );
          }
          const info = branching?.info(item.id);
          const canRegenerate = Boolean(branching && info?.canFork && !isLoading && i === items.length - 1);
          return (
            <Fragment key={item.id}>
              <AssistantMessage parts={item.parts} streaming={streaming} />
              {!streaming && (
                <AnswerActions>
                  {info && branching && (
                    <BranchSwitcher branch={info.branch} options={info.options} onSelect={branching.select} label="answer" />
                  )}
                  {canRegenerate && branching && (
                    <button
                      type="button"
                      className="icon-button"
                      aria-label="Regenerate answer"
                      title="Regenerate (keeps this answer as another version)"
                      onClick={() => branching.regenerate(item.id)}
                    >
                      <Icon name="regenerate" size={15} />
                    </button>
                  )}
                  {feedback && <AnswerFeedback item={item} feedback={feedback} />}
                </AnswerActions>
              )}
            </Fragment>
          );
        })}
        {showPendingAssistant && <AssistantMessage parts={[]} streaming />}
        {!isLoading && footer}
      </div>
    </div>
  );
}

function AnswerActions({ children }: { children: ReactNode }) {
  return <div className="message-actions answer-actions">{children}</div>;
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
