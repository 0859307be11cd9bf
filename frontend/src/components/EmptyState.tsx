interface Props {
  onPick: (text: string) => void;
}

const SUGGESTIONS = [
  "Write a short report on the pros and cons of SQLite, save it as a markdown file",
  "Plan a 3-day trip to Lisbon",
  "Explain what a LangGraph checkpoint is",
];

export function EmptyState({ onPick }: Props) {
  return (
    <div className="empty-state">
      <h1>What can I help with?</h1>
      <div className="suggestions">
        {SUGGESTIONS.map((s) => (
          <button key={s} type="button" className="suggestion" onClick={() => onPick(s)}>
            {s}
          </button>
        ))}
      </div>
    </div>
  );
}
