import type { Client, Message } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { useEffect, useRef } from "react";
import { ASSISTANT_ID } from "../api/client";
import { keepStoppedMessages } from "../lib/stop";
import type { AgentState } from "../lib/types";

interface Options {
  client: Client;
  threadId: string | null;
  /** The assistant that answers (a custom agent's id); default: the lead agent. */
  assistantId?: string;
  onThreadId: (threadId: string) => void;
  /** A run ended (its thread id when known). */
  onRunFinished: (threadId?: string) => void;
  /** Each `custom` stream event (sub-agent progress, safety stops…), live or replayed. */
  onCustomEvent?: (data: unknown) => void;
}

/**
 * The SDK's `useStream`, configured for the lead agent: resumable runs whose id
 * is kept in sessionStorage so a reload rejoins them (`reconnectOnMount`),
 * and the thread's checkpoint history (the last HISTORY_LIMIT states) so messages can be
 * edited, regenerated and switched between branches. On Stop, the text already shown
 * stays (the saved state lacks the step that was cut off), marked as stopped.
 */
export function useChatStream({ client, threadId, assistantId, onThreadId, onRunFinished, onCustomEvent }: Options) {
  const shown = useRef<Message[]>([]);
  const stream = useStream<AgentState>({
    client,
    assistantId: assistantId ?? ASSISTANT_ID,
    threadId,
    onThreadId,
    reconnectOnMount: true,
    fetchStateHistory: { limit: HISTORY_LIMIT },
    messagesKey: "messages",
    throttle: 50,
    onFinish: (_state, run) => onRunFinished(run?.thread_id),
    onCustomEvent: (data) => onCustomEvent?.(data),
    onStop: ({ mutate }) => {
      const seen = shown.current;
      mutate((prev) => ({ messages: keepStoppedMessages(prev.messages ?? [], seen) }));
    },
  });
  const messages = stream.messages;
  useEffect(() => {
    shown.current = messages;
  }, [messages]);
  return stream;
}

export type ChatStream = ReturnType<typeof useChatStream>;

/**
 * Checkpoints fetched with a thread (POST /threads/{id}/history). Each state carries the whole
 * conversation, so the payload grows with limit × thread length; a turn of the lead agent
 * writes about 4 checkpoints, so 48 covers the last ~12 turns: older messages cannot be
 * edited and older forks are not offered (docs/ui.md).
 */
export const HISTORY_LIMIT = 48;

/** Stream modes every run of ours asks for. */
export const STREAM_MODES = ["values", "messages-tuple", "custom"] as const;
