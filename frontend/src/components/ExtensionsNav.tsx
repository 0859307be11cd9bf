import type { SettingsPage } from "../lib/route";

interface Props {
  current: string;
  onNavigate: (page: SettingsPage) => void;
}

const LINKS: { page: SettingsPage; label: string }[] = [
  { page: "agents", label: "Agents" },
  { page: "skills", label: "Skills" },
  { page: "tools", label: "Tools" },
  { page: "channels", label: "Channels" },
];

/** Links to the agent's extension pages (shown in every auth mode). */
export function ExtensionsNav({ current, onNavigate }: Props) {
  return (
    <nav className="sidebar-nav" aria-label="Extensions">
      {LINKS.map((l) => (
        <button
          key={l.page}
          type="button"
          className="sidebar-nav-link"
          aria-current={current === l.page ? "page" : undefined}
          onClick={() => onNavigate(l.page)}
        >
          {l.label}
        </button>
      ))}
    </nav>
  );
}
