import { formatBytes } from "../lib/format";
import type { AttachedFile } from "../lib/types";
import { Icon } from "./Icon";

interface Props {
  files: readonly AttachedFile[];
  onRemove?: (name: string) => void;
  label: string;
}

/** File chips: on a sent message, or pending in the composer (removable). */
export function AttachmentList({ files, onRemove, label }: Props) {
  if (files.length === 0) return null;
  return (
    <ul className="attachments" aria-label={label}>
      {files.map((f) => (
        <li key={f.name} className="attachment-chip">
          <span className="attachment-icon"><Icon name="file" size={14} /></span>
          <span className="attachment-name" title={f.name}>{f.name}</span>
          <span className="attachment-size">{formatBytes(f.size)}</span>
          {f.markdown && (
            <span className="attachment-size" title={`Readable copy: ${f.markdown.virtual_path}`}>
              · text
            </span>
          )}
          {onRemove && (
            <button type="button" className="icon-button" aria-label={`Remove ${f.name}`} onClick={() => onRemove(f.name)}>
              ×
            </button>
          )}
        </li>
      ))}
    </ul>
  );
}
