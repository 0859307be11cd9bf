import type { AttachedFile } from "../lib/types";
import { AttachmentList } from "./AttachmentList";

interface Props {
  text: string;
  files: AttachedFile[];
  images: string[];
}

export function HumanMessage({ text, files, images }: Props) {
  return (
    <div className="message message-human" data-testid="message-human">
      <div className="bubble">
        {images.map((src) => (
          <img key={src} className="message-image" src={src} alt="Attached image" />
        ))}
        {text && <div className="human-text">{text}</div>}
        <AttachmentList files={files} label="Attached files" />
      </div>
    </div>
  );
}
