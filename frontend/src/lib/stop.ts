import type { Message } from "@langchain/langgraph-sdk";

/**
 * After Stop, the SDK replaces the shown state with the thread's saved head, which
 * does not hold the answer that was cut off (a cancelled step is never saved). Keep
 * what the user already saw: every shown message the head lacks, marked `stopped`.
 */
export function keepStoppedMessages(head: readonly Message[], shown: readonly Message[]): Message[] {
  const saved = new Set(head.map((m) => m.id).filter((id): id is string => typeof id === "string"));
  const extra = shown
    .filter((m) => !(m.id && saved.has(m.id)))
    .map((m) =>
      m.type === "ai" ? ({ ...m, additional_kwargs: { ...m.additional_kwargs, stopped: true } } as Message) : m,
    );
  return extra.length ? [...head, ...extra] : [...head];
}

/** Was this AI message cut off by Stop? */
export function isStopped(message: Message): boolean {
  return message.additional_kwargs?.stopped === true;
}
