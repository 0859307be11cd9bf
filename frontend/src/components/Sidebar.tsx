import { useEffect, useRef, useState, type ReactNode } from "react";
import { searchable, useThreadSearch } from "../hooks/useThreadSearch";
import type { ThreadsState } from "../hooks/useThreads";
import { filterThreads, isPinned, threadTitle } from "../lib/threads";
import { ThreadItem } from "./ThreadItem";

interface Props {
  threads: ThreadsState;
  activeThreadId: string | null;
  onOpen: (threadId: string | null) => void;
  footer?: ReactNode;
  nav?: ReactNode;
}

/** Calls `onVisible` when the element scrolls into view (the end of a paged list). */
function useEndOfList(onVisible: () => void, enabled: boolean) {
  const ref = useRef<HTMLLIElement | null>(null);
  const callback = useRef(onVisible);
  useEffect(() => {
    callback.current = onVisible;
  }, [onVisible]);
  useEffect(() => {
    const node = ref.current;
    if (!enabled || !node || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) callback.current();
    }, { rootMargin: "200px" });
    observer.observe(node);
    return () => observer.disconnect();
  }, [enabled]);
  return ref;
}

/**
 * New chat, search, and the thread list: pinned first, then newest first, a page at a time
 * (more load as the list is scrolled). A search looks through every chat's title and
 * messages on the server; until its answer is in, the loaded titles are filtered here.
 */
export function Sidebar({ threads, activeThreadId, onOpen, footer, nav }: Props) {
  const [query, setQuery] = useState("");
  const search = useThreadSearch(query);
  const searchingServer = searchable(query);
  const visible = searchingServer && search.results ? search.results : filterThreads(threads.threads, query);
  const more = searchingServer ? search.hasMore : threads.hasMore;
  const end = useEndOfList(searchingServer ? search.loadMore : threads.loadMore, more);
  const error = searchingServer ? search.error : threads.error;
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
      {error && <p className="sidebar-note error-text">{searchingServer ? "Search failed" : "Could not load chats"}: {error}</p>}
      {!threads.loading && !search.searching && visible.length === 0 && !error && (
        <p className="sidebar-note">{query ? "No chats match." : "No chats yet."}</p>
      )}
      <ul className="thread-list" aria-label={searchingServer ? "Search results" : "Chat history"} aria-busy={search.searching || undefined}>
        {visible.map((t) => (
          <ThreadItem
            key={t.thread_id}
            threadId={t.thread_id}
            title={threadTitle(t)}
            active={t.thread_id === activeThreadId}
            busy={t.status === "busy"}
            pinned={isPinned(t)}
            onOpen={onOpen}
            onRename={async (id, title) => {
              await threads.rename(id, title);
              search.patchMetadata(id, { title });
            }}
            onPin={async (id, pinned) => {
              await threads.setPinned(id, pinned);
              search.patchMetadata(id, { pinned });
            }}
            onDelete={async (id) => {
              await threads.remove(id);
              search.drop(id);
              if (id === activeThreadId) onOpen(null);
            }}
          />
        ))}
        {more && <li ref={end} className="thread-list-end" data-testid="thread-list-end" aria-hidden="true" />}
      </ul>
      {nav}
      {footer && <div className="sidebar-footer">{footer}</div>}
    </nav>
  );
}
