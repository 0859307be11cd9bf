import { useState } from "react";
import type { BranchInfo } from "../lib/branching";
import type { AttachedFile } from "../lib/types";
import { AttachmentList } from "./AttachmentList";
import { BranchSwitcher } from "./BranchSwitcher";
import { Icon } from "./Icon";

interface Props {
  text: string;
  files: AttachedFile[];
  images: string[];
  /** Versions of this message and the edit gesture (absent: neither shown). */
  branch?: BranchInfo;
  onSelectBranch?: (branch: string) => void;
  onEdit?: (text: string) => void;
}

export function HumanMessage({ text, files, images, branch, onSelectBranch, onEdit }: Props) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(text);
  const canEdit = Boolean(onEdit && branch?.canFork);

  const save = () => {
    const next = draft.trim();
    if (!next || !onEdit) return;
    setEditing(false);
    onEdit(next);
  };

  return (
    <div className="message message-human" data-testid="message-human">
      {editing ? (
        <form
          className="bubble edit-form"
          aria-label="Edit message"
          onSubmit={(e) => {
            e.preventDefault();
            save();
          }}
        >
          <label className="visually-hidden" htmlFor="edit-message">Edited message</label>
          <textarea
            id="edit-message"
            value={draft}
            autoFocus
            rows={Math.min(8, Math.max(2, draft.split("\n").length))}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Escape") {
                e.preventDefault();
                setEditing(false);
              } else if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
                e.preventDefault();
                save();
              }
            }}
          />
          <div className="edit-actions">
            <button type="button" className="chip-button" onClick={() => setEditing(false)}>Cancel</button>
            <button type="submit" className="primary" disabled={!draft.trim()}>Save and send</button>
          </div>
        </form>
      ) : (
        <div className="bubble">
          {images.map((src) => (
            <img key={src} className="message-image" src={src} alt="Attached image" />
          ))}
          {text && <div className="human-text">{text}</div>}
          <AttachmentList files={files} label="Attached files" />
        </div>
      )}
      {!editing && (branch || canEdit) && (
        <div className="message-actions human-actions">
          {branch && onSelectBranch && (
            <BranchSwitcher branch={branch.branch} options={branch.options} onSelect={onSelectBranch} label="message" />
          )}
          {canEdit && (
            <button
              type="button"
              className="icon-button"
              aria-label="Edit message"
              title="Edit and rerun from here"
              onClick={() => {
                setDraft(text);
                setEditing(true);
              }}
            >
              <Icon name="pencil" size={14} />
            </button>
          )}
        </div>
      )}
    </div>
  );
}
