import { useState, type FormEvent } from "react";
import { pathForThread } from "../lib/route";
import { Icon } from "./Icon";

interface Props {
  threadId: string;
  title: string;
  active: boolean;
  busy: boolean;
  pinned?: boolean;
  onOpen: (threadId: string) => void;
  onRename: (threadId: string, title: string) => Promise<void>;
  onPin?: (threadId: string, pinned: boolean) => Promise<void>;
  onDelete: (threadId: string) => Promise<void>;
}

/** One thread in the sidebar: open, pin, rename inline, delete (with confirmation). */
export function ThreadItem({ threadId, title, active, busy, pinned = false, onOpen, onRename, onPin, onDelete }: Props) {
  const [mode, setMode] = useState<"view" | "rename" | "confirm">("view");
  const [value, setValue] = useState(title);

  const submitRename = async (e: FormEvent) => {
    e.preventDefault();
    const next = value.trim();
    setMode("view");
    if (next && next !== title) await onRename(threadId, next);
  };

  if (mode === "rename") {
    return (
      <li className="thread-item editing">
        <form onSubmit={submitRename} className="thread-rename">
          <label className="visually-hidden" htmlFor={`rename-${threadId}`}>New title</label>
          <input
            id={`rename-${threadId}`}
            value={value}
            onChange={(e) => setValue(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Escape") {
                e.stopPropagation();
                setMode("view");
              }
            }}
            autoFocus
          />
          <button type="submit" className="chip-button">Save</button>
        </form>
      </li>
    );
  }

  return (
    <li className={`thread-item${active ? " active" : ""}${pinned ? " pinned" : ""}`} data-pinned={pinned || undefined}>
      <a
        href={pathForThread(threadId)}
        className="thread-link"
        aria-current={active ? "page" : undefined}
        onClick={(e) => {
          if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
          e.preventDefault();
          onOpen(threadId);
        }}
      >
        {busy && <span className="spinner" aria-label="running" />}
        {pinned && (
          <span className="thread-pin" aria-label="pinned">
            <Icon name="pin" size={12} />
          </span>
        )}
        <span className="thread-title">{title}</span>
      </a>
      {mode === "confirm" ? (
        <span className="thread-actions confirm">
          <button type="button" className="chip-button danger" onClick={() => void onDelete(threadId)}>
            Delete
          </button>
          <button type="button" className="chip-button" onClick={() => setMode("view")}>
            Cancel
          </button>
        </span>
      ) : (
        <span className="thread-actions">
          {onPin && (
            <button
              type="button"
              className="icon-button"
              aria-label={`${pinned ? "Unpin" : "Pin"} ${title}`}
              aria-pressed={pinned}
              onClick={() => void onPin(threadId, !pinned)}
            >
              <Icon name="pin" size={14} />
            </button>
          )}
          <button
            type="button"
            className="icon-button"
            aria-label={`Rename ${title}`}
            onClick={() => {
              setValue(title);
              setMode("rename");
            }}
          >
            <Icon name="pencil" size={14} />
          </button>
          <button type="button" className="icon-button" aria-label={`Delete ${title}`} onClick={() => setMode("confirm")}>
            <Icon name="trash" size={14} />
          </button>
        </span>
      )}
    </li>
  );
}
