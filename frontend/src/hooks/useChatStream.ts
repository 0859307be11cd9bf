import type { Client } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { ASSISTANT_ID } from "../api/client";
import type { AgentState } from "../lib/types";

interface Options {
  client: Client;
  threadId: string | null;
  onThreadId: (threadId: string) => void;
  onRunFinished: () => void;
}

/**
 * The SDK's `useStream`, configured for the lead agent: resumable runs whose id
 * is kept in sessionStorage so a reload rejoins them (`reconnectOnMount`),
 * only the latest state fetched (no branching UI).
 */
export function useChatStream({ client, threadId, onThreadId, onRunFinished }: Options) {
  return useStream<AgentState>({
    client,
    assistantId: ASSISTANT_ID,
    threadId,
    onThreadId,
    reconnectOnMount: true,
    fetchStateHistory: false,
    messagesKey: "messages",
    throttle: 50,
    onFinish: () => onRunFinished(),
  });
}

export type ChatStream = ReturnType<typeof useChatStream>;

/** Stream modes every run of ours asks for. */
export const STREAM_MODES = ["values", "messages-tuple"] as const;
