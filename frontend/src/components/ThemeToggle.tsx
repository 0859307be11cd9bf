import type { ThemePreference } from "../hooks/useTheme";

const ICON: Record<ThemePreference, string> = { system: "◐", light: "☀", dark: "☾" };

interface Props {
  preference: ThemePreference;
  onCycle: () => void;
}

export function ThemeToggle({ preference, onCycle }: Props) {
  return (
    <button type="button" className="icon-button" onClick={onCycle} aria-label={`Theme: ${preference}. Change theme`} title={`Theme: ${preference}`}>
      <span aria-hidden="true">{ICON[preference]}</span>
    </button>
  );
}
