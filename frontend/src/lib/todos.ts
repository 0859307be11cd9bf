import type { Todo } from "./types";

const STATUSES = new Set<Todo["status"]>(["pending", "in_progress", "completed"]);

/** Validate `values.todos`, dropping malformed entries. */
export function normalizeTodos(value: unknown): Todo[] {
  if (!Array.isArray(value)) return [];
  const todos: Todo[] = [];
  for (const t of value) {
    if (!t || typeof t !== "object") continue;
    const o = t as Record<string, unknown>;
    if (typeof o.content !== "string") continue;
    const status = STATUSES.has(o.status as Todo["status"]) ? (o.status as Todo["status"]) : "pending";
    todos.push({ content: o.content, status });
  }
  return todos;
}

export function todoProgress(todos: readonly Todo[]): { done: number; total: number } {
  return { done: todos.filter((t) => t.status === "completed").length, total: todos.length };
}
