import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { Feedback } from "../api/governance";
import { FeedbackBar } from "./FeedbackBar";

const up: Feedback = {
  feedback_id: "f",
  run_id: "r",
  thread_id: "t",
  user_id: "u",
  message_id: null,
  rating: 1,
  comment: null,
  created_at: null,
  updated_at: null,
};

describe("FeedbackBar", () => {
  it("rates up, and a second click on the same thumb clears", async () => {
    const onRate = vi.fn(() => Promise.resolve());
    const onClear = vi.fn(() => Promise.resolve());
    const { rerender } = render(<FeedbackBar feedback={null} onRate={onRate} onClear={onClear} />);
    fireEvent.click(screen.getByRole("button", { name: "Good answer" }));
    await waitFor(() => expect(onRate).toHaveBeenCalledWith(1));
    rerender(<FeedbackBar feedback={up} onRate={onRate} onClear={onClear} />);
    expect(screen.getByRole("button", { name: "Good answer" }).getAttribute("aria-pressed")).toBe("true");
    fireEvent.click(screen.getByRole("button", { name: "Good answer" }));
    await waitFor(() => expect(onClear).toHaveBeenCalled());
  });

  it("asks for a comment on a thumbs down and sends it", async () => {
    const onRate = vi.fn(() => Promise.resolve());
    render(<FeedbackBar feedback={null} onRate={onRate} onClear={() => Promise.resolve()} />);
    fireEvent.click(screen.getByRole("button", { name: "Bad answer" }));
    fireEvent.change(screen.getByPlaceholderText(/What was wrong/), { target: { value: "wrong file" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(onRate).toHaveBeenLastCalledWith(-1, "wrong file"));
  });

  it("sends a comment after a change from thumbs up as a thumbs down, once the first save is done", async () => {
    let finish = () => {};
    const onRate = vi.fn((_rating: 1 | -1, _comment?: string) => new Promise<void>((resolve) => (finish = resolve)));
    render(<FeedbackBar feedback={up} onRate={onRate} onClear={() => Promise.resolve()} />);
    fireEvent.click(screen.getByRole("button", { name: "Bad answer" }));
    fireEvent.change(screen.getByPlaceholderText(/What was wrong/), { target: { value: "too short" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(onRate).toHaveBeenCalledTimes(1));
    expect(onRate).toHaveBeenLastCalledWith(-1); // the comment waits for the rating's save
    finish();
    await waitFor(() => expect(onRate).toHaveBeenCalledTimes(2));
    expect(onRate).toHaveBeenLastCalledWith(-1, "too short");
  });

  it("shows an error when saving fails", async () => {
    const onRate = vi.fn(() => Promise.reject(new Error("nope")));
    render(<FeedbackBar feedback={null} onRate={onRate} onClear={() => Promise.resolve()} />);
    fireEvent.click(screen.getByRole("button", { name: "Good answer" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toBe("nope"));
  });
});
