import { useState } from "react";
import type { Feedback } from "../api/governance";

interface Props {
  feedback: Feedback | null;
  onRate: (rating: 1 | -1, comment?: string) => Promise<void>;
  onClear: () => Promise<void>;
}

/** Thumbs up / down on one answer, with an optional comment for a thumbs down. */
export function FeedbackBar({ feedback, onRate, onClear }: Props) {
  const [commenting, setCommenting] = useState(false);
  const [comment, setComment] = useState("");
  const [error, setError] = useState<string | null>(null);
  const rating = feedback?.rating ?? 0;

  const act = (fn: () => Promise<void>) => {
    setError(null);
    fn().catch((e: unknown) => setError(e instanceof Error ? e.message : "Could not save the feedback"));
  };
  const thumb = (value: 1 | -1) => {
    if (rating === value) return act(onClear);
    if (value === -1) setCommenting(true);
    act(() => onRate(value));
  };

  return (
    <div className="feedback-bar" data-testid="feedback-bar">
      <button type="button" className="icon-button" aria-label="Good answer" aria-pressed={rating === 1} onClick={() => thumb(1)}>
        👍
      </button>
      <button type="button" className="icon-button" aria-label="Bad answer" aria-pressed={rating === -1} onClick={() => thumb(-1)}>
        👎
      </button>
      {feedback?.comment && !commenting && <span className="feedback-comment">“{feedback.comment}”</span>}
      {commenting && (
        <form
          className="feedback-form"
          onSubmit={(e) => {
            e.preventDefault();
            setCommenting(false);
            act(() => onRate(rating === 1 ? 1 : -1, comment));
          }}
        >
          <label className="visually-hidden" htmlFor="feedback-comment">What was wrong?</label>
          <input id="feedback-comment" value={comment} onChange={(e) => setComment(e.target.value)} placeholder="What was wrong? (optional)" />
          <button type="submit" className="chip-button">Send</button>
        </form>
      )}
      {error && <span className="feedback-error" role="alert">{error}</span>}
    </div>
  );
}
