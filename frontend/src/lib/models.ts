import type { ModelInfo } from "../api/rest";

/** The picker label; the scripted offline model is marked as a demo. */
export function modelLabel(m: Pick<ModelInfo, "name" | "display_name" | "is_demo">): string {
  const name = m.display_name || m.name;
  // Say "offline demo" once: not when the display name already says it.
  if (!m.is_demo || /\bdemo\b/i.test(name)) return name;
  return `${name} (offline demo)`;
}
