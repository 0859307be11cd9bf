import { useRef, useState, type ChangeEvent, type FormEvent } from "react";
import { useGateway } from "../../api/gateway";
import {
  addFact,
  CATEGORIES,
  clearMemory,
  deleteFact,
  editFact,
  exportMemory,
  getMemory,
  getMemoryStatus,
  importMemory,
  parseExportFile,
  type Category,
  type Fact,
  type MemoryDocument,
  type MemoryStatus,
  type HistorySection,
  type UserSection,
} from "../../api/memory";
import type { Fetch } from "../../api/http";
import { useResource } from "../../hooks/useResource";
import { formatWhen } from "../../lib/format";
import { ErrorNotice } from "../ErrorNotice";
import { SettingsLayout } from "./SettingsLayout";

const SUMMARIES: { group: "user" | "history"; key: UserSection | HistorySection; title: string }[] = [
  { group: "user", key: "workContext", title: "Work context" },
  { group: "user", key: "personalContext", title: "Personal context" },
  { group: "user", key: "topOfMind", title: "Current focus" },
  { group: "history", key: "recentMonths", title: "Recent months" },
  { group: "history", key: "earlierContext", title: "Earlier context" },
  { group: "history", key: "longTermBackground", title: "Long-term background" },
];

function summaryOf(doc: MemoryDocument, group: "user" | "history", key: UserSection | HistorySection): string {
  const sections: Partial<Record<string, { summary: string }>> = doc[group];
  return sections[key]?.summary ?? "";
}

interface Props {
  onOpenSidebar: () => void;
}

interface Draft {
  id: string;
  content: string;
  category: Category;
}

function CategorySelect({ value, onChange, label }: { value: Category; onChange: (c: Category) => void; label: string }) {
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.target.value as Category)}>
      {CATEGORIES.map((c) => (
        <option key={c} value={c}>
          {c}
        </option>
      ))}
    </select>
  );
}

/** The memory document and the update queue's status, loaded together. */
async function loadMemory(fetch: Fetch): Promise<{ doc: MemoryDocument; status: MemoryStatus }> {
  const [doc, status] = await Promise.all([getMemory(fetch), getMemoryStatus(fetch)]);
  return { doc, status };
}

/** What the agent remembers about the signed-in user: summaries and facts; edit, add, export, import, clear. */
export function MemoryPage({ onOpenSidebar }: Props) {
  const { fetch } = useGateway();
  const memory = useResource(loadMemory, "memory");
  const { error, setError, reload: refresh } = memory;
  const doc = memory.data?.doc ?? null;
  const status = memory.data?.status ?? null;
  const [notice, setNotice] = useState<string | null>(null);
  const [content, setContent] = useState("");
  const [category, setCategory] = useState<Category>("preference");
  const [busy, setBusy] = useState(false);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [clearing, setClearing] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);

  const act = async (what: string, body: () => Promise<unknown>, done?: string) => {
    setBusy(true);
    setError(null);
    setNotice(null);
    const ok = await memory.act(what, async () => {
      await body();
      if (done) setNotice(done);
      refresh();
    });
    setBusy(false);
    return ok;
  };

  const add = async (e: FormEvent) => {
    e.preventDefault();
    const text = content.trim();
    if (busy || !text) return;
    if (await act("add the fact", () => addFact(fetch, { content: text, category }))) setContent("");
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!draft || !draft.content.trim()) return;
    const edit = { content: draft.content.trim(), category: draft.category };
    if (await act("save the fact", () => editFact(fetch, draft.id, edit))) setDraft(null);
  };

  const remove = (fact: Fact) => {
    setConfirming(null);
    void act("delete the fact", () => deleteFact(fetch, fact.id));
  };

  const download = () =>
    void act("export memory", async () => {
      const exported = await exportMemory(fetch);
      const blob = new Blob([JSON.stringify(exported, null, 2)], { type: "application/json" });
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = "memory.json";
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 0);
    });

  const upload = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = "";
    if (!file) return;
    const parsed = parseExportFile(await file.text());
    if ("error" in parsed) {
      setError(`Could not import ${file.name}: ${parsed.error}`);
      return;
    }
    await act("import memory", () => importMemory(fetch, parsed.doc), `Imported ${file.name}.`);
  };

  const clear = () => {
    setClearing(false);
    void act("clear memory", () => clearMemory(fetch), "Memory cleared.");
  };

  const facts = doc?.facts ?? [];
  return (
    <SettingsLayout
      title="Memory"
      onOpenSidebar={onOpenSidebar}
      intro={
        <>
          What the agent remembers about you across conversations. It is updated after your chats and shown to the agent
          when it answers; correct or delete anything that is wrong.
        </>
      }
    >
      {error && <ErrorNotice message={error} onDismiss={() => setError(null)} />}
      {notice && (
        <p className="settings-note" role="status">
          {notice}
        </p>
      )}
      {status && !status.enabled && (
        <p className="settings-note" role="status">
          Memory is turned off on this gateway (<code>memory.enabled: false</code>): nothing new is learned or used.
        </p>
      )}

      <section className="settings-card" aria-labelledby="summaries-title">
        <h2 id="summaries-title">Summaries</h2>
        {doc === null && !error && <p className="settings-note">Loading…</p>}
        {doc && (
          <dl className="memory-summaries">
            {SUMMARIES.filter(({ group, key }) => group === "user" || summaryOf(doc, group, key)).map(({ group, key, title }) => (
              <div key={key} data-testid={`summary-${key}`}>
                <dt>{title}</dt>
                <dd>{summaryOf(doc, group, key) || <span className="settings-note">Nothing yet.</span>}</dd>
              </div>
            ))}
          </dl>
        )}
      </section>

      <section className="settings-card" aria-labelledby="add-fact-title">
        <h2 id="add-fact-title">Add a fact</h2>
        <form className="inline-form" onSubmit={(e) => void add(e)}>
          <label className="field grow">
            <span>Fact</span>
            <input value={content} onChange={(e) => setContent(e.target.value)} placeholder="e.g. I prefer concise answers" maxLength={1000} />
          </label>
          <label className="field">
            <span>Category</span>
            <CategorySelect label="Category" value={category} onChange={setCategory} />
          </label>
          <button type="submit" className="primary" disabled={busy || !content.trim()}>
            Add fact
          </button>
        </form>
      </section>

      <section className="settings-card" aria-labelledby="facts-title">
        <h2 id="facts-title">Facts ({facts.length})</h2>
        {doc && facts.length === 0 && <p className="settings-note">No facts remembered yet.</p>}
        {facts.length > 0 && (
          <ul className="memory-facts">
            {facts.map((fact) => (
              <li key={fact.id} className="memory-fact" data-testid="memory-fact">
                {draft?.id === fact.id ? (
                  <form className="inline-form" onSubmit={(e) => void save(e)}>
                    <label className="field grow">
                      <span>Fact</span>
                      <input
                        value={draft.content}
                        onChange={(e) => setDraft({ ...draft, content: e.target.value })}
                        maxLength={1000}
                        autoFocus
                      />
                    </label>
                    <label className="field">
                      <span>Category</span>
                      <CategorySelect label="Edit category" value={draft.category} onChange={(c) => setDraft({ ...draft, category: c })} />
                    </label>
                    <button type="submit" className="primary" disabled={busy || !draft.content.trim()}>
                      Save
                    </button>
                    <button type="button" className="chip-button" onClick={() => setDraft(null)}>
                      Cancel
                    </button>
                  </form>
                ) : (
                  <>
                    <div className="memory-fact-text">
                      <span className={`badge${fact.category === "correction" ? " badge-accent" : ""}`}>{fact.category}</span>{" "}
                      <span data-testid="memory-fact-content">{fact.content}</span>
                      <span className="cell-sub">
                        Confidence {Math.round(fact.confidence * 100)}% · updated {formatWhen(fact.updatedAt)}
                      </span>
                    </div>
                    <div className="row-actions">
                      {confirming === fact.id ? (
                        <>
                          <button type="button" className="chip-button danger" onClick={() => remove(fact)}>
                            Delete
                          </button>
                          <button type="button" className="chip-button" onClick={() => setConfirming(null)}>
                            Cancel
                          </button>
                        </>
                      ) : (
                        <>
                          <button
                            type="button"
                            className="chip-button"
                            aria-label={`Edit ${fact.content}`}
                            onClick={() => setDraft({ id: fact.id, content: fact.content, category: fact.category })}
                          >
                            Edit
                          </button>
                          <button type="button" className="chip-button" aria-label={`Delete ${fact.content}`} onClick={() => setConfirming(fact.id)}>
                            Delete…
                          </button>
                        </>
                      )}
                    </div>
                  </>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="settings-card" aria-labelledby="manage-title">
        <h2 id="manage-title">Export, import, clear</h2>
        <div className="form-actions memory-actions">
          <button type="button" className="chip-button" onClick={download} disabled={busy}>
            Export
          </button>
          <button type="button" className="chip-button" onClick={() => fileInput.current?.click()} disabled={busy}>
            Import…
          </button>
          <input
            ref={fileInput}
            type="file"
            accept="application/json,.json"
            className="visually-hidden"
            aria-label="Import memory file"
            data-testid="memory-import-input"
            onChange={(e) => void upload(e)}
          />
          {clearing ? (
            <>
              <button type="button" className="chip-button danger" onClick={clear}>
                Clear everything
              </button>
              <button type="button" className="chip-button" onClick={() => setClearing(false)}>
                Cancel
              </button>
            </>
          ) : (
            <button type="button" className="chip-button danger" onClick={() => setClearing(true)} disabled={busy}>
              Clear memory…
            </button>
          )}
        </div>
        <p className="settings-note">Importing replaces what is remembered with the file’s summaries and facts.</p>
        {status && (
          <p className="settings-note" data-testid="memory-status">
            Last update {formatWhen(status.last_update_at, "never")}
            {status.queued_for_user > 0 && ` · ${status.queued_for_user} conversation(s) waiting`}
            {status.last_error && ` · last problem: ${status.last_error}`}
          </p>
        )}
      </section>
    </SettingsLayout>
  );
}
