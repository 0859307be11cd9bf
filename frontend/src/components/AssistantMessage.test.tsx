import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { AssistantMessage } from "./AssistantMessage";

describe("AssistantMessage", () => {
  it("shows an error fallback as an error, not as an answer", () => {
    render(
      <AssistantMessage
        streaming={false}
        parts={[{ id: "a", text: "The model is unavailable.", reasoning: "", isError: true, toolCalls: [] }]}
      />,
    );
    expect(screen.getByRole("alert")).toHaveTextContent("The model is unavailable.");
    expect(screen.getByTestId("error-fallback")).toBeInTheDocument();
  });

  it("keeps reasoning collapsed and shows a typing indicator before any part", () => {
    const { rerender } = render(
      <AssistantMessage streaming={false} parts={[{ id: "a", text: "Answer", reasoning: "secret steps", isError: false, toolCalls: [] }]} />,
    );
    expect(screen.getByRole("button", { name: /Reasoning/ })).toHaveAttribute("aria-expanded", "false");
    expect(screen.queryByText("secret steps")).toBeNull();
    expect(screen.getByText("Answer")).toBeInTheDocument();
    rerender(<AssistantMessage streaming parts={[]} />);
    expect(screen.getByLabelText("Assistant is thinking")).toBeInTheDocument();
  });
});
