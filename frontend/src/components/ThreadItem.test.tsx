import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { ThreadItem } from "./ThreadItem";

const ID = "0190a7c2-1b2c-7d3e-8f40-123456789abc";

function setup() {
  const props = {
    threadId: ID,
    title: "Old title",
    active: false,
    busy: false,
    onOpen: vi.fn(),
    onRename: vi.fn(async () => {}),
    onDelete: vi.fn(async () => {}),
  };
  render(
    <ul>
      <ThreadItem {...props} />
    </ul>,
  );
  return props;
}

describe("ThreadItem", () => {
  it("opens the thread through the router, with a real href", async () => {
    const props = setup();
    const link = screen.getByRole("link", { name: "Old title" });
    expect(link).toHaveAttribute("href", `/t/${ID}`);
    await userEvent.click(link);
    expect(props.onOpen).toHaveBeenCalledWith(ID);
  });

  it("renames inline", async () => {
    const props = setup();
    await userEvent.click(screen.getByRole("button", { name: "Rename Old title" }));
    const input = screen.getByLabelText("New title");
    await userEvent.clear(input);
    await userEvent.type(input, "New title{Enter}");
    expect(props.onRename).toHaveBeenCalledWith(ID, "New title");
  });

  it("asks before deleting", async () => {
    const props = setup();
    await userEvent.click(screen.getByRole("button", { name: "Delete Old title" }));
    expect(props.onDelete).not.toHaveBeenCalled();
    await userEvent.click(screen.getByRole("button", { name: "Delete" }));
    expect(props.onDelete).toHaveBeenCalledWith(ID);
  });
});
