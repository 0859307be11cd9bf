import type { Message } from "@langchain/langgraph-sdk";
import { useEffect, useState } from "react";
import { useGateway } from "../api/gateway";
import { fetchSuggestions, type SuggestionTurn } from "../api/rest";
import { contentText } from "../lib/content";

/** Turns sent for context: the last few human/AI texts, each cut to a few thousand characters. */
const CONTEXT_TURNS = 6;
const TURN_CHARS = 4000;
export const MAX_SUGGESTIONS = 3;

export function suggestionContext(messages: readonly Message[]): SuggestionTurn[] {
  const turns: SuggestionTurn[] = [];
  for (const m of messages) {
    if (m.type !== "human" && m.type !== "ai") continue;
    const text = contentText(m.content).trim();
    if (text) turns.push({ role: m.type === "human" ? "user" : "assistant", content: text.slice(0, TURN_CHARS) });
  }
  return turns.slice(-CONTEXT_TURNS);
}

/**
 * Follow-up suggestions for the answer that just finished: fetched once per `answer` key
 * (a new key after each run; null: none wanted). Failures just show nothing.
 */
export function useSuggestions(threadId: string | null, answer: string | null, messages: readonly Message[]): string[] {
  const { fetch } = useGateway();
  const [state, setState] = useState<{ key: string; items: string[] } | null>(null);
  const key = threadId && answer ? `${threadId}:${answer}` : null;
  const context = key ? suggestionContext(messages) : [];
  const hasContext = context.length > 0;

  useEffect(() => {
    if (!key || !threadId || !hasContext) return;
    const controller = new AbortController();
    fetchSuggestions(fetch, threadId, context, MAX_SUGGESTIONS, controller.signal)
      .then((items) => setState({ key, items: items.slice(0, MAX_SUGGESTIONS) }))
      .catch(() => {
        /* suggestions are a nicety: nothing is shown */
      });
    return () => controller.abort();
    // The context is read when the key changes (one request per finished answer).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [fetch, key, threadId, hasContext]);

  return state && state.key === key ? state.items : [];
}
