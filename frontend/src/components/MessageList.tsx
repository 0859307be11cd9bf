import { useEffect, useRef } from "react";
import type { ChatItem } from "../lib/messages";
import { AssistantMessage } from "./AssistantMessage";
import { HumanMessage } from "./HumanMessage";

interface Props {
  items: ChatItem[];
  isLoading: boolean;
}

/** The conversation; sticks to the bottom while the user has not scrolled up. */
export function MessageList({ items, isLoading }: Props) {
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
            <AssistantMessage key={item.id} parts={item.parts} streaming={isLoading && i === items.length - 1} />
          ),
        )}
        {showPendingAssistant && <AssistantMessage parts={[]} streaming />}
      </div>
    </div>
  );
}
