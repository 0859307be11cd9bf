import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { ClarificationPrompt } from "./ClarificationPrompt";

describe("ClarificationPrompt", () => {
  it("answers with an option button", async () => {
    const onAnswer = vi.fn();
    render(<ClarificationPrompt request={{ question: "Which format?", options: ["PDF", "Markdown"] }} onAnswer={onAnswer} />);
    expect(screen.getByText("Which format?")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Markdown" }));
    expect(onAnswer).toHaveBeenCalledWith("Markdown");
  });

  it("answers with free text", async () => {
    const onAnswer = vi.fn();
    render(<ClarificationPrompt request={{ question: "Name?", options: [] }} onAnswer={onAnswer} />);
    const submit = screen.getByRole("button", { name: "Answer" });
    expect(submit).toBeDisabled();
    await userEvent.type(screen.getByLabelText("Your answer"), "  Ada {Enter}");
    expect(onAnswer).toHaveBeenCalledWith("Ada");
  });
});
