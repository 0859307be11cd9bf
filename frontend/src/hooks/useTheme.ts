import { useCallback, useEffect, useState } from "react";

export type ThemePreference = "system" | "light" | "dark";
const KEY = "pronghorn.theme";

function readPreference(): ThemePreference {
  try {
    const v = window.localStorage.getItem(KEY);
    return v === "light" || v === "dark" ? v : "system";
  } catch {
    return "system";
  }
}

/** Theme preference: "system" follows prefers-color-scheme (pure CSS), else forces one. */
export function useTheme(): [ThemePreference, () => void] {
  const [pref, setPref] = useState<ThemePreference>(readPreference);

  useEffect(() => {
    const root = document.documentElement;
    if (pref === "system") root.removeAttribute("data-theme");
    else root.setAttribute("data-theme", pref);
    try {
      if (pref === "system") window.localStorage.removeItem(KEY);
      else window.localStorage.setItem(KEY, pref);
    } catch {
      /* storage disabled */
    }
  }, [pref]);

  const cycle = useCallback(() => {
    setPref((p) => (p === "system" ? "light" : p === "light" ? "dark" : "system"));
  }, []);

  return [pref, cycle];
}
