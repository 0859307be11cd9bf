import { useRef, useState, type DragEvent, type KeyboardEvent, type ReactNode } from "react";
import { formatBytes } from "../lib/format";
import { insertSkill, matchSkills, slashOptionId, slashQuery, type SkillOption } from "../lib/slash";
import type { AttachedFile } from "../lib/types";
import type { UploadLimits } from "../lib/uploads";
import { AttachmentList } from "./AttachmentList";
import { Icon } from "./Icon";
import { SlashMenu } from "./SlashMenu";

const SLASH_MENU_ID = "composer-skills";

interface Props {
  draft: string;
  onDraftChange: (text: string) => void;
  onSend: (text: string) => void;
  onStop: () => void;
  onFiles: (files: File[]) => void;
  onRemoveFile: (name: string) => void;
  pendingFiles: readonly AttachedFile[];
  uploadErrors: readonly string[];
  onDismissUploadErrors: () => void;
  limits: UploadLimits;
  isRunning: boolean;
  uploading: boolean;
  disabled?: boolean;
  /** Enabled skills offered when `/` is typed. */
  skills?: readonly SkillOption[];
  /** Extra controls shown in the toolbar (model picker, plan mode…). */
  children?: ReactNode;
}

/** The message box: Enter sends, Shift+Enter is a new line; attach or drop files; Send or Stop. */
export function Composer(props: Props) {
  const { draft, onDraftChange, onSend, onStop, onFiles, isRunning, uploading, disabled } = props;
  const fileInput = useRef<HTMLInputElement>(null);
  const [dragging, setDragging] = useState(false);
  const textarea = useRef<HTMLTextAreaElement>(null);
  const [caret, setCaret] = useState(0);
  const [menuIndex, setMenuIndex] = useState(0);
  const [closedAt, setClosedAt] = useState<string | null>(null);
  const canSend = !disabled && !isRunning && !uploading && draft.trim() !== "";

  // The `/skill` menu: open while a `/word` is typed at the caret (until Escape for that word).
  const slash = props.skills?.length ? slashQuery(draft, Math.min(caret, draft.length)) : null;
  const slashKey = slash ? `${slash.start}:${slash.query}` : null;
  const matches = slash && slashKey !== closedAt ? matchSkills(props.skills ?? [], slash.query) : [];
  const menuOpen = matches.length > 0;
  const active = Math.min(menuIndex, matches.length - 1);

  const pickSkill = (name: string) => {
    if (!slash) return;
    const { text, caret: at } = insertSkill(draft, slash, name);
    onDraftChange(text);
    setCaret(at);
    setMenuIndex(0);
    requestAnimationFrame(() => {
      const el = textarea.current;
      if (el) {
        el.focus();
        el.setSelectionRange(at, at);
      }
    });
  };

  const send = () => {
    if (canSend) onSend(draft.trim());
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (menuOpen && !e.nativeEvent.isComposing) {
      const move = e.key === "ArrowDown" ? 1 : e.key === "ArrowUp" ? -1 : 0;
      if (move) {
        e.preventDefault();
        setMenuIndex((active + move + matches.length) % matches.length);
        return;
      }
      if ((e.key === "Enter" && !e.shiftKey) || e.key === "Tab") {
        e.preventDefault();
        const skill = matches[active];
        if (skill) pickSkill(skill.name);
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault(); // not a Stop
        setClosedAt(slashKey);
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const files = Array.from(e.dataTransfer.files);
    if (files.length) onFiles(files);
  };

  return (
    <form
      className={`composer${dragging ? " dragging" : ""}`}
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
      onDragOver={(e) => {
        if (e.dataTransfer.types.includes("Files")) {
          e.preventDefault();
          setDragging(true);
        }
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
      aria-label="Message composer"
    >
      {props.uploadErrors.length > 0 && (
        <div className="upload-errors" role="alert">
          <ul>
            {props.uploadErrors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
          <button type="button" className="icon-button" aria-label="Dismiss upload errors" onClick={props.onDismissUploadErrors}>
            ×
          </button>
        </div>
      )}
      <AttachmentList files={props.pendingFiles} onRemove={props.onRemoveFile} label="Files to send" />
      <label htmlFor="composer-input" className="visually-hidden">Message</label>
      {menuOpen && (
        <SlashMenu id={SLASH_MENU_ID} options={matches} active={active} onPick={pickSkill} onHover={setMenuIndex} />
      )}
      <textarea
        id="composer-input"
        ref={textarea}
        value={draft}
        onChange={(e) => {
          onDraftChange(e.target.value);
          setCaret(e.target.selectionStart);
          setMenuIndex(0);
        }}
        onSelect={(e) => setCaret(e.currentTarget.selectionStart)}
        onKeyDown={onKeyDown}
        aria-autocomplete="list"
        aria-controls={menuOpen ? SLASH_MENU_ID : undefined}
        aria-activedescendant={menuOpen ? slashOptionId(SLASH_MENU_ID, active) : undefined}
        placeholder={dragging ? "Drop files to attach" : "Message Pronghorn…"}
        aria-describedby="composer-hint"
        rows={Math.min(8, Math.max(1, draft.split("\n").length))}
        disabled={disabled}
      />
      <span id="composer-hint" className="visually-hidden">Enter sends, Shift+Enter adds a new line, Escape stops a running answer. Type / for skills.</span>
      <div className="composer-toolbar">
        <button
          type="button"
          className="icon-button attach"
          onClick={() => fileInput.current?.click()}
          aria-label={`Attach files (up to ${formatBytes(props.limits.maxFileBytes)} each)`}
          title={`Attach files — up to ${formatBytes(props.limits.maxFileBytes)} each, ${formatBytes(props.limits.maxTotalBytes)} per chat`}
          disabled={disabled || uploading}
        >
          <Icon name="paperclip" size={18} />
        </button>
        <input
          ref={fileInput}
          type="file"
          multiple
          hidden
          data-testid="file-input"
          onChange={(e) => {
            const files = Array.from(e.target.files ?? []);
            e.target.value = "";
            if (files.length) onFiles(files);
          }}
        />
        <span className="limit-hint">
          {uploading ? "Uploading…" : `Max ${formatBytes(props.limits.maxFileBytes)}/file`}
        </span>
        <div className="composer-options">{props.children}</div>
        {isRunning ? (
          <button type="button" className="stop-button" onClick={onStop} aria-label="Stop (Esc)" title="Stop (Esc)">
            ■ Stop
          </button>
        ) : (
          <button type="submit" className="primary send-button" disabled={!canSend} aria-label="Send message">
            Send
          </button>
        )}
      </div>
    </form>
  );
}
