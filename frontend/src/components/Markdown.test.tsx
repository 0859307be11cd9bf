import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { Markdown } from "./Markdown";

describe("Markdown", () => {
  it("renders GFM and highlights code", () => {
    const { container } = render(<Markdown text={"**bold** ~~gone~~\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\ndef f(): pass\n```"} />);
    expect(container.querySelector("strong")?.textContent).toBe("bold");
    expect(container.querySelector("del")?.textContent).toBe("gone");
    expect(container.querySelector("table")).not.toBeNull();
    expect(container.querySelector("code.hljs.language-python .hljs-keyword")?.textContent).toBe("def");
  });

  it("never renders raw HTML", () => {
    const { container } = render(<Markdown text={'hi <img src=x onerror="alert(1)"> <script>alert(2)</script><b>raw</b>'} />);
    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector("script")).toBeNull();
    expect(container.querySelector("b")).toBeNull();
    expect(container.innerHTML).not.toContain("onerror");
  });

  it("makes javascript: links inert and opens safe links in a new tab", () => {
    render(<Markdown text={"[evil](javascript:alert(1)) [good](https://example.org) ![x](javascript:alert(3))"} />);
    expect(screen.getByText("evil").closest("a")).toBeNull();
    const good = screen.getByText("good").closest("a");
    expect(good).toHaveAttribute("href", "https://example.org");
    expect(good).toHaveAttribute("rel", expect.stringContaining("noopener"));
    expect(document.querySelector("img")).toBeNull();
    expect(document.body.innerHTML).not.toContain("javascript:");
  });
});
