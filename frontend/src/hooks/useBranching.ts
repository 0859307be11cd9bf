import type { Checkpoint, Message } from "@langchain/langgraph-sdk";
import { useEffect, useMemo, useState } from "react";
import type { Branching, BranchInfo } from "../lib/branching";
import { loadBranch, saveBranch } from "../lib/branches";
import { newId } from "../lib/ids";
import type { AgentState } from "../lib/types";
import type { ChatStream } from "./useChatStream";

/** Start a run from `checkpoint` with `input`, showing `shown` until the server's state arrives. */
export type ForkRun = (input: { messages: Message[] } | null, checkpoint: Omit<Checkpoint, "thread_id">, shown: Message[]) => void;

const NONE: BranchInfo = { branch: undefined, options: undefined, canFork: false };

/**
 * Edit / regenerate / switch branch on top of the SDK's branch tree (built from the
 * thread's checkpoint history). Every fork starts from the parent of the checkpoint where
 * the message first appeared, so the old branch stays intact. The branch on screen is
 * remembered per thread (localStorage) and restored when the thread is opened again.
 * A run still streaming is stopped before a fork or a switch (its partial answer is not kept).
 */
export interface BranchingState extends Branching {
  /**
   * After a switch that stopped a streaming run, the SDK keeps showing that run's values;
   * these are the chosen branch's instead (null otherwise). Cleared by `attach` on the next run.
   */
  detachedValues: AgentState | null;
  attach: () => void;
}

export function useBranching(stream: ChatStream, threadId: string | null, fork: ForkRun): BranchingState {
  const { setBranch, branch, isLoading, stop, getMessagesMetadata } = stream;
  const [detachedIn, setDetachedIn] = useState<string | null>(null);
  const detached = detachedIn !== null && detachedIn === threadId;
  const detachedValues = detached ? (stream.history.at(-1)?.values ?? null) : null;
  const messages = detachedValues?.messages ?? stream.messages;

  // Restore the branch last viewed when a thread is opened; save it whenever it changes.
  const [restored, setRestored] = useState<string | null | undefined>(undefined);
  if (restored !== threadId) {
    setRestored(threadId);
    const saved = loadBranch(threadId);
    if (saved !== branch) setBranch(saved);
  }
  const ready = restored === threadId;
  useEffect(() => {
    if (ready) saveBranch(threadId, branch);
  }, [ready, threadId, branch]);

  const actions = useMemo((): Branching => {
    const byId = new Map<string, Message>();
    messages.forEach((m) => {
      if (m.id) byId.set(m.id, m);
    });
    const meta = (id: string) => {
      const message = byId.get(id);
      return message ? getMessagesMetadata(message) : undefined;
    };
    const parentOf = (id: string) => {
      const parent = meta(id)?.firstSeenState?.parent_checkpoint;
      return parent?.checkpoint_id ? parent : null;
    };
    const before = (id: string) => {
      const i = messages.findIndex((m) => m.id === id);
      return i < 0 ? messages : messages.slice(0, i);
    };
    const stopFirst = async () => {
      if (isLoading) await stop();
    };
    return {
      info: (id) => {
        const m = meta(id);
        if (!m) return NONE;
        return { branch: m.branch, options: m.branchOptions, canFork: Boolean(parentOf(id)) };
      },
      select: (next) => {
        if (!isLoading) return setBranch(next);
        void stop().then(() => {
          setBranch(next);
          setDetachedIn(threadId);
        });
      },
      edit: (id, text) => {
        const original = byId.get(id);
        const parent = parentOf(id);
        if (!original || !parent) return;
        const message: Message = {
          id: newId(),
          type: "human",
          content: text,
          additional_kwargs: original.additional_kwargs ?? {},
        };
        const shown = [...before(id), message];
        void stopFirst().then(() => {
          setDetachedIn(null);
          fork({ messages: [message] }, parent, shown);
        });
      },
      regenerate: (id) => {
        const parent = parentOf(id);
        if (!parent) return;
        const shown = before(id);
        void stopFirst().then(() => {
          setDetachedIn(null);
          fork(null, parent, shown);
        });
      },
    };
  }, [messages, getMessagesMetadata, isLoading, stop, setBranch, threadId, fork]);
  return { ...actions, detachedValues, attach: () => setDetachedIn(null) };
}
