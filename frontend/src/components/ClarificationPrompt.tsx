import { useState, type FormEvent } from "react";
import type { ClarificationRequest } from "../lib/types";

interface Props {
  request: ClarificationRequest;
  onAnswer: (answer: string) => void;
  disabled?: boolean;
}

/** The agent's question: one button per option, and a free-text answer. */
export function ClarificationPrompt({ request, onAnswer, disabled }: Props) {
  const [text, setText] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const answer = text.trim();
    if (answer) onAnswer(answer);
  };
  return (
    <section className="clarification" aria-label="The assistant asks" data-testid="clarification">
      <p className="clarification-question">{request.question}</p>
      {request.options.length > 0 && (
        <div className="clarification-options">
          {request.options.map((option) => (
            <button key={option} type="button" className="option-button" disabled={disabled} onClick={() => onAnswer(option)}>
              {option}
            </button>
          ))}
        </div>
      )}
      <form className="clarification-form" onSubmit={submit}>
        <label className="visually-hidden" htmlFor="clarification-answer">Your answer</label>
        <input
          id="clarification-answer"
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder={request.options.length ? "Or type another answer…" : "Type your answer…"}
          disabled={disabled}
          autoFocus
        />
        <button type="submit" className="primary" disabled={disabled || !text.trim()}>
          Answer
        </button>
      </form>
    </section>
  );
}
