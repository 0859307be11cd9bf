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
      <div className="settings-scroll">
        <div className="settings-column">
          {intro && <p className="settings-intro">{intro}</p>}
          {children}
        </div>
      </div>
    </main>
  );
}
