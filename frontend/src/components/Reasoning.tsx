import { useState } from "react";

interface Props {
  text: string;
  streaming: boolean;
}

/** The model's reasoning, collapsed by default. */
export function Reasoning({ text, streaming }: Props) {
  const [open, setOpen] = useState(false);
  return (
    <div className="reasoning">
      <button type="button" className="disclosure" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        <span className="chevron" aria-hidden="true">{open ? "▾" : "▸"}</span>
        {streaming ? "Thinking…" : "Reasoning"}
      </button>
      {open && <div className="reasoning-body">{text}</div>}
    </div>
  );
}
