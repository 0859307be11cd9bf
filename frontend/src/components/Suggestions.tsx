interface Props {
  items: readonly string[];
  onPick: (text: string) => void;
}

/** Follow-up questions under the last answer; a click sends one. */
export function Suggestions({ items, onPick }: Props) {
  if (items.length === 0) return null;
  return (
    <div className="followups" role="group" aria-label="Suggested follow-ups" data-testid="suggestions">
      {items.map((text) => (
        <button key={text} type="button" className="chip-button" onClick={() => onPick(text)}>
          {text}
        </button>
      ))}
    </div>
  );
}
