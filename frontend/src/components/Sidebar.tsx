import { useState, type ReactNode } from "react";
import type { ThreadsState } from "../hooks/useThreads";
import { filterThreads, threadTitle } from "../lib/threads";
import { ThreadItem } from "./ThreadItem";

interface Props {
  threads: ThreadsState;
  activeThreadId: string | null;
  onOpen: (threadId: string | null) => void;
  footer?: ReactNode;
  nav?: ReactNode;
}

/** New chat, search, and the thread list (newest first). */
export function Sidebar({ threads, activeThreadId, onOpen, footer, nav }: Props) {
  const [query, setQuery] = useState("");
  const visible = filterThreads(threads.threads, query);
  return (
    <nav className="sidebar" aria-label="Chats">
      <div className="sidebar-top">
        <div className="brand">
          <img src="/favicon.svg" alt="" width={22} height={22} />
          <span>Pronghorn</span>
        </div>
        <button type="button" className="primary new-chat" onClick={() => onOpen(null)}>
          + New chat
        </button>
        <label className="visually-hidden" htmlFor="thread-search">Search chats</label>
        <input
          id="thread-search"
          type="search"
          className="thread-search"
          placeholder="Search chats"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
      </div>
      {threads.error && <p className="sidebar-note error-text">Could not load chats: {threads.error}</p>}
      {!threads.loading && visible.length === 0 && !threads.error && (
        <p className="sidebar-note">{query ? "No chats match." : "No chats yet."}</p>
      )}
      <ul className="thread-list" aria-label="Chat history">
        {visible.map((t) => (
          <ThreadItem
            key={t.thread_id}
            threadId={t.thread_id}
            title={threadTitle(t)}
            active={t.thread_id === activeThreadId}
            busy={t.status === "busy"}
            onOpen={onOpen}
            onRename={threads.rename}
            onDelete={async (id) => {
              await threads.remove(id);
              if (id === activeThreadId) onOpen(null);
            }}
          />
        ))}
      </ul>
      {nav}
      {footer && <div className="sidebar-footer">{footer}</div>}
    </nav>
  );
}
