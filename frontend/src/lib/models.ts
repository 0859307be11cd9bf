import type { ModelInfo } from "../api/rest";

/** The picker label; the scripted offline model is marked as such. */
export function modelLabel(m: Pick<ModelInfo, "name" | "display_name" | "is_demo">): string {
  const name = m.display_name || m.name;
  return m.is_demo ? `${name} (offline demo)` : name;
}
