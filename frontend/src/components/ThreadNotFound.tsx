interface Props {
  checking: boolean;
  onNewChat: () => void;
  onOpenSidebar: () => void;
}

/** The chat area for a thread id that is being checked, or that the gateway does not know (404). */
export function ThreadNotFound({ checking, onNewChat, onOpenSidebar }: Props) {
  return (
    <main className="chat-main">
      <header className="chat-header">
        <button type="button" className="icon-button menu-button" aria-label="Open chat list" onClick={onOpenSidebar}>
          ☰
        </button>
        <h1 className="chat-title">{checking ? "Opening chat…" : "Chat not found"}</h1>
      </header>
      {checking ? (
        <div className="empty-state" role="status">
          <span className="spinner" aria-hidden="true" />
          <p className="settings-note">Loading the chat…</p>
        </div>
      ) : (
        <div className="empty-state" data-testid="thread-not-found">
          <h1>Chat not found</h1>
          <p className="not-found-text">
            This chat does not exist, was deleted, or belongs to another account.
          </p>
          <button type="button" className="primary" onClick={onNewChat}>
            Start a new chat
          </button>
        </div>
      )}
    </main>
  );
}
