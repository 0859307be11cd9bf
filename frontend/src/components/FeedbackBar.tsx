import { useRef, useState } from "react";
import type { Feedback } from "../api/governance";
import { Icon } from "./Icon";

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
  // Saves go one after another: a thumbs down is saved at once and its comment a moment later,
  // and the comment must not race the first save (the last one to land is what is kept).
  const saving = useRef<Promise<void>>(Promise.resolve());

  const act = (fn: () => Promise<void>) => {
    setError(null);
    saving.current = saving.current
      .then(fn)
      .catch((e: unknown) => setError(e instanceof Error ? e.message : "Could not save the feedback"));
  };
  const thumb = (value: 1 | -1) => {
    if (rating === value) return act(onClear);
    if (value === -1) setCommenting(true);
    act(() => onRate(value));
  };

  return (
    <div className="feedback-bar" data-testid="feedback-bar">
      <button type="button" className="icon-button" aria-label="Good answer" aria-pressed={rating === 1} onClick={() => thumb(1)}>
        <Icon name="thumbUp" />
      </button>
      <button type="button" className="icon-button" aria-label="Bad answer" aria-pressed={rating === -1} onClick={() => thumb(-1)}>
        <Icon name="thumbDown" />
      </button>
      {feedback?.comment && !commenting && <span className="feedback-comment">“{feedback.comment}”</span>}
      {commenting && (
        <form
          className="feedback-form"
          onSubmit={(e) => {
            e.preventDefault();
            setCommenting(false);
            act(() => onRate(-1, comment)); // the form only opens on a thumbs down
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
