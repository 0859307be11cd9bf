import type { ClarificationRequest } from "./types";

/**
 * Find a clarification request among interrupts: `{type: "clarification",
 * question, options}`. Returns null when there is none.
 */
export function extractClarification(interrupts: ReadonlyArray<{ value?: unknown }> | undefined | null): ClarificationRequest | null {
  if (!interrupts) return null;
  for (const interrupt of interrupts) {
    const value = interrupt?.value;
    if (!value || typeof value !== "object") continue;
    const v = value as Record<string, unknown>;
    if (v.type !== "clarification" || typeof v.question !== "string") continue;
    const options = Array.isArray(v.options)
      ? v.options.filter((o): o is string => typeof o === "string" && o.trim() !== "")
      : [];
    return { question: v.question, options };
  }
  return null;
}
