import type { ReactNode } from "react";

interface Props {
  title: string;
  intro?: ReactNode;
  onOpenSidebar: () => void;
  children: ReactNode;
}

/** The frame of an account page: a header like the chat's, then a centred column of sections. */
export function SettingsLayout({ title, intro, onOpenSidebar, children }: Props) {
  return (
    <main className="settings-main">
      <header className="chat-header">
        <button type="button" className="icon-button menu-button" aria-label="Open chat list" onClick={onOpenSidebar}>
          ☰
        </button>
        <h1 className="chat-title">{title}</h1>
      </header>
      {/* Focusable so a keyboard can scroll a page that has no control of its own. */}
      <div className="settings-scroll" tabIndex={0} role="region" aria-label={title}>
        <div className="settings-column">
          {intro && <p className="settings-intro">{intro}</p>}
          {children}
        </div>
      </div>
    </main>
  );
}
