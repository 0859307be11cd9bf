/** "1.5 MB"-style size, base 1024. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "?";
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = value >= 10 || Number.isInteger(value) ? 0 : 1;
  return `${value.toFixed(digits)} ${units[unit]}`;
}

/** Thousands separators for token counts. */
export function formatCount(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "?";
}

/** A timestamp for tables ("Mar 12, 2026, 2:05 PM"); `empty` for null or junk. */
export function formatWhen(iso: string | null | undefined, empty = "—"): string {
  if (!iso) return empty;
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return empty;
  return at.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
