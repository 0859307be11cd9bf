import { useState } from "react";
import { todoProgress } from "../lib/todos";
import type { Todo } from "../lib/types";

const MARK: Record<Todo["status"], string> = { pending: "○", in_progress: "◐", completed: "●" };
const LABEL: Record<Todo["status"], string> = { pending: "pending", in_progress: "in progress", completed: "completed" };

interface Props {
  todos: Todo[];
}

/** The plan-mode todo list, collapsible, with progress. */
export function TodoList({ todos }: Props) {
  const [open, setOpen] = useState(true);
  if (todos.length === 0) return null;
  const { done, total } = todoProgress(todos);
  return (
    <section className="todo-list" aria-label="Plan">
      <button type="button" className="disclosure" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        <span className="chevron" aria-hidden="true">{open ? "▾" : "▸"}</span>
        Plan · {done}/{total} done
      </button>
      {open && (
        <ol>
          {todos.map((t, i) => (
            <li key={`${i}-${t.content}`} className={`todo todo-${t.status}`}>
              <span className="todo-mark" aria-hidden="true">{MARK[t.status]}</span>
              <span className="todo-content">{t.content}</span>
              <span className="visually-hidden">({LABEL[t.status]})</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
