/** Budgets and run feedback (docs/governance.md, docs/api.md). */

import { errorFrom, type Fetch } from "./http";
import type { Schema } from "./types";

export type BudgetWindow = Schema<"BudgetWindow">;
export type Budget = Schema<"Budget">;
export type Feedback = Schema<"Feedback">;

const threadBase = (threadId: string) => `/api/threads/${encodeURIComponent(threadId)}`;

async function getJson<T>(fetch: Fetch, url: string, signal?: AbortSignal): Promise<T> {
  const response = await fetch(url, { signal, headers: { Accept: "application/json" } });
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as T;
}

export function fetchBudget(fetch: Fetch, signal?: AbortSignal): Promise<Budget> {
  return getJson<Budget>(fetch, "/api/usage/budget", signal);
}

/** The `id` of a stored message (the API types a message's content as any JSON). */
function messageId(content: unknown): string | null {
  if (!content || typeof content !== "object") return null;
  const id = (content as { id?: unknown }).id;
  return typeof id === "string" ? id : null;
}

/** Message id → the run that added it (the latest 200 messages). */
export async function fetchMessageRuns(fetch: Fetch, threadId: string, signal?: AbortSignal): Promise<Map<string, string>> {
  const page = await getJson<Schema<"MessagePage">>(fetch, `${threadBase(threadId)}/messages/page?limit=200`, signal);
  const out = new Map<string, string>();
  for (const item of page.data) {
    const id = messageId(item.content);
    if (item.run_id && id) out.set(id, item.run_id);
  }
  return out;
}

export async function fetchThreadFeedback(fetch: Fetch, threadId: string, signal?: AbortSignal): Promise<Feedback[]> {
  const body = await getJson<Schema<"ThreadFeedback">>(fetch, `${threadBase(threadId)}/feedback`, signal);
  return body.feedback;
}

export async function putFeedback(fetch: Fetch, threadId: string, runId: string, rating: 1 | -1, comment?: string): Promise<Feedback> {
  const response = await fetch(`${threadBase(threadId)}/runs/${encodeURIComponent(runId)}/feedback`, {
    method: "PUT",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ rating, ...(comment?.trim() ? { comment: comment.trim() } : {}) } satisfies Schema<"FeedbackBody">),
  });
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as Feedback;
}

export async function deleteFeedback(fetch: Fetch, threadId: string, runId: string): Promise<void> {
  const response = await fetch(`${threadBase(threadId)}/runs/${encodeURIComponent(runId)}/feedback`, { method: "DELETE" });
  if (!response.ok && response.status !== 404) throw await errorFrom(response);
}
