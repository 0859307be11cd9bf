import { render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { Markdown } from "./LazyMarkdown";

describe("LazyMarkdown", () => {
  it("shows the plain text at once, then the rendered Markdown", async () => {
    const { container } = render(<Markdown text={"**bold** and `code`"} />);
    // Until the renderer's chunk arrives: the same text, unrendered, in the same box.
    const pending = screen.queryByTestId("markdown-pending");
    if (pending) expect(pending.textContent).toBe("**bold** and `code`");
    // The import compiles the whole remark/highlight stack on first use: a generous deadline.
    await waitFor(() => expect(container.querySelector("strong")?.textContent).toBe("bold"), { timeout: 20_000 });
    expect(screen.queryByTestId("markdown-pending")).toBeNull();
    expect(container.querySelector("code")?.textContent).toBe("code");
  });
});
