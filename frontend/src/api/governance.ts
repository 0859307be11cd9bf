/** Budgets and run feedback (docs/governance.md, docs/api.md). */

import { errorFrom, type Fetch } from "./http";

export interface BudgetWindow {
  tokens_limit: number | null;
  tokens_used: number;
  tokens_remaining: number | null;
  cost_limit_usd: number | null;
  cost_used_usd: number;
  cost_remaining_usd: number | null;
}

export interface Budget {
  owner_id: string;
  limited: boolean;
  daily: BudgetWindow;
  monthly: BudgetWindow;
}

export interface Feedback {
  feedback_id: string;
  run_id: string;
  rating: 1 | -1;
  comment: string | null;
}

interface MessagePage {
  data: { seq: number; run_id: string | null; content: { id?: string } }[];
  has_more: boolean;
}

const threadBase = (threadId: string) => `/api/threads/${encodeURIComponent(threadId)}`;

async function getJson<T>(fetch: Fetch, url: string, signal?: AbortSignal): Promise<T> {
  const response = await fetch(url, { signal, headers: { Accept: "application/json" } });
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as T;
}

export function fetchBudget(fetch: Fetch, signal?: AbortSignal): Promise<Budget> {
  return getJson<Budget>(fetch, "/api/usage/budget", signal);
}

/** Message id → the run that added it (the latest 200 messages). */
export async function fetchMessageRuns(fetch: Fetch, threadId: string, signal?: AbortSignal): Promise<Map<string, string>> {
  const page = await getJson<MessagePage>(fetch, `${threadBase(threadId)}/messages/page?limit=200`, signal);
  const out = new Map<string, string>();
  for (const item of page.data) {
    if (item.run_id && typeof item.content?.id === "string") out.set(item.content.id, item.run_id);
  }
  return out;
}

export async function fetchThreadFeedback(fetch: Fetch, threadId: string, signal?: AbortSignal): Promise<Feedback[]> {
  const body = await getJson<{ feedback: Feedback[] }>(fetch, `${threadBase(threadId)}/feedback`, signal);
  return body.feedback;
}

export async function putFeedback(fetch: Fetch, threadId: string, runId: string, rating: 1 | -1, comment?: string): Promise<Feedback> {
  const response = await fetch(`${threadBase(threadId)}/runs/${encodeURIComponent(runId)}/feedback`, {
    method: "PUT",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ rating, ...(comment?.trim() ? { comment: comment.trim() } : {}) }),
  });
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as Feedback;
}

export async function deleteFeedback(fetch: Fetch, threadId: string, runId: string): Promise<void> {
  const response = await fetch(`${threadBase(threadId)}/runs/${encodeURIComponent(runId)}/feedback`, { method: "DELETE" });
  if (!response.ok && response.status !== 404) throw await errorFrom(response);
}
