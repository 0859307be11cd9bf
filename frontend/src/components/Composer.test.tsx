import { fireEvent, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_UPLOAD_LIMITS } from "../lib/uploads";
import { Composer } from "./Composer";

const SKILLS = [
  { name: "data-analysis", description: "Analyse tables" },
  { name: "deep-research", description: "Research a topic" },
];

function Harness(props: { onSend?: (t: string) => void; onStop?: () => void; onFiles?: (f: File[]) => void; isRunning?: boolean }) {
  const [draft, setDraft] = useState("");
  return (
    <Composer
      draft={draft}
      onDraftChange={setDraft}
      onSend={props.onSend ?? (() => {})}
      onStop={props.onStop ?? (() => {})}
      onFiles={props.onFiles ?? (() => {})}
      onRemoveFile={() => {}}
      pendingFiles={[{ name: "data.csv", size: 2048 }]}
      uploadErrors={[]}
      onDismissUploadErrors={() => {}}
      limits={DEFAULT_UPLOAD_LIMITS}
      isRunning={props.isRunning ?? false}
      uploading={false}
      skills={SKILLS}
    />
  );
}

describe("Composer", () => {
  it("offers skills after / and inserts the chosen one with the keyboard", async () => {
    const onSend = vi.fn();
    render(<Harness onSend={onSend} />);
    const box = screen.getByLabelText("Message");
    await userEvent.type(box, "/d");
    const options = screen.getAllByRole("option");
    expect(options.map((o) => o.textContent)).toEqual(["/data-analysisAnalyse tables", "/deep-researchResearch a topic"]);
    expect(options[0]).toHaveAttribute("aria-selected", "true");
    await userEvent.keyboard("{ArrowDown}");
    expect(box).toHaveAttribute("aria-activedescendant", options[1]!.id);
    await userEvent.keyboard("{Enter}");
    expect(box).toHaveValue("/deep-research ");
    expect(onSend).not.toHaveBeenCalled();
    expect(screen.queryByRole("listbox")).toBeNull();
    await userEvent.type(box, "and /x");
    expect(screen.queryByRole("listbox")).toBeNull();
  });

  it("closes the skills list on Escape", async () => {
    render(<Harness />);
    const box = screen.getByLabelText("Message");
    await userEvent.type(box, "/");
    expect(screen.getByRole("listbox", { name: "Skills" })).toBeInTheDocument();
    await userEvent.keyboard("{Escape}");
    expect(screen.queryByRole("listbox")).toBeNull();
    expect(box).toHaveValue("/");
  });

  it("sends on Enter and inserts a newline on Shift+Enter", async () => {
    const onSend = vi.fn();
    render(<Harness onSend={onSend} />);
    const box = screen.getByLabelText("Message");
    await userEvent.type(box, "line one{Shift>}{Enter}{/Shift}line two");
    expect(box).toHaveValue("line one\nline two");
    expect(onSend).not.toHaveBeenCalled();
    await userEvent.type(box, "{Enter}");
    expect(onSend).toHaveBeenCalledWith("line one\nline two");
  });

  it("does not send blank messages", async () => {
    const onSend = vi.fn();
    render(<Harness onSend={onSend} />);
    await userEvent.type(screen.getByLabelText("Message"), "   {Enter}");
    expect(onSend).not.toHaveBeenCalled();
    expect(screen.getByRole("button", { name: "Send message" })).toBeDisabled();
  });

  it("shows Stop while running", async () => {
    const onStop = vi.fn();
    render(<Harness onStop={onStop} isRunning />);
    expect(screen.queryByRole("button", { name: "Send message" })).toBeNull();
    await userEvent.click(screen.getByRole("button", { name: /Stop/ }));
    expect(onStop).toHaveBeenCalled();
  });

  it("lists pending files, shows the limit, and passes picked or dropped files on", () => {
    const onFiles = vi.fn();
    render(<Harness onFiles={onFiles} />);
    expect(screen.getByText("data.csv")).toBeInTheDocument();
    expect(screen.getByText("2 KB")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: /Attach files \(up to 50 MB each\)/ })).toBeInTheDocument();
    const file = new File(["hello"], "hello.txt", { type: "text/plain" });
    fireEvent.change(screen.getByTestId("file-input"), { target: { files: [file] } });
    expect(onFiles).toHaveBeenCalledWith([file]);
    fireEvent.drop(screen.getByRole("form", { name: "Message composer" }), { dataTransfer: { files: [file], types: ["Files"] } });
    expect(onFiles).toHaveBeenCalledTimes(2);
  });
});
