import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ToolCallCard } from "./ToolCallCard";

describe("ToolCallCard", () => {
  it("is collapsed, shows status, and expands to arguments and result", async () => {
    render(<ToolCallCard call={{ id: "c", name: "bash", args: { command: "ls -la" }, status: "done", result: "a.txt" }} />);
    const header = screen.getByRole("button", { name: /bash/ });
    expect(header).toHaveAttribute("aria-expanded", "false");
    expect(screen.getByText("done")).toBeInTheDocument();
    expect(screen.queryByText("a.txt")).toBeNull();
    await userEvent.click(header);
    expect(header).toHaveAttribute("aria-expanded", "true");
    expect(screen.getByText("a.txt")).toBeInTheDocument();
    expect(screen.getByText(/"command": "ls -la"/)).toBeInTheDocument();
  });

  it("opens errors by default and labels them", () => {
    render(<ToolCallCard call={{ id: "c", name: "bash", args: {}, status: "error", result: "exit 1" }} />);
    expect(screen.getByTestId("tool-card")).toHaveAttribute("data-status", "error");
    expect(screen.getByText("Error")).toBeInTheDocument();
    expect(screen.getByText("exit 1")).toBeInTheDocument();
  });

  it("shows a running state without a result", () => {
    render(<ToolCallCard call={{ id: "c", name: "web_search", args: { query: "x" }, status: "running" }} />);
    expect(screen.getByText("running")).toBeInTheDocument();
  });

  it("names the MCP server of an MCP tool", () => {
    render(<ToolCallCard call={{ id: "c", name: "github_create_issue", args: {}, status: "done", result: "ok", server: "github" }} />);
    expect(screen.getByTestId("tool-server")).toHaveTextContent("MCP · github");
  });

  it("shows no server badge for built-in tools", () => {
    render(<ToolCallCard call={{ id: "c", name: "bash", args: {}, status: "done", result: "ok" }} />);
    expect(screen.queryByTestId("tool-server")).toBeNull();
  });
});
