import type { Message } from "@langchain/langgraph-sdk";

/** True when an AI message is the agent's error fallback, not an answer. */
export function isErrorFallback(message: Pick<Message, "type" | "additional_kwargs">): boolean {
  if (message.type !== "ai") return false;
  const flag = message.additional_kwargs?.error_fallback;
  return flag !== undefined && flag !== null && flag !== false;
}

/** A human-readable message for anything thrown by the SDK, fetch, or an SSE `error` event. */
export function describeError(error: unknown): string {
  if (error == null) return "Unknown error";
  if (typeof error === "string") return error;
  if (error instanceof Error) {
    const name = error.name && error.name !== "Error" ? `${error.name}: ` : "";
    return `${name}${error.message}`.trim() || "Unknown error";
  }
  if (typeof error === "object") {
    const e = error as Record<string, unknown>;
    const message = e.message ?? e.detail;
    if (typeof message === "string") {
      return typeof e.error === "string" && e.error !== message ? `${e.error}: ${message}` : message;
    }
    if (typeof e.error === "string") return e.error;
  }
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/** Aborts caused by the user (Stop button, navigation) are not errors to show. */
export function isAbortError(error: unknown): boolean {
  if (!(error instanceof Error) && !(error instanceof DOMException)) return false;
  return error.name === "AbortError" || /\babort(ed)?\b/i.test(error.message);
}
