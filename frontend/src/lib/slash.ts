/** `/skill` autocomplete in the composer: find the token being typed and replace it. */
import type { SkillInfo } from "../api/extensions";

export interface SlashQuery {
  /** Text typed after the slash (may be empty). */
  query: string;
  /** Where the slash is in the draft. */
  start: number;
  /** The caret (end of the token). */
  end: number;
}

/** A skill the menu offers (from `/api/skills`). */
export type SkillOption = Pick<SkillInfo, "name" | "description">;

/** The `/word` just before the caret, at the start of the draft or after whitespace; else null. */
export function slashQuery(draft: string, caret: number): SlashQuery | null {
  const before = draft.slice(0, caret);
  const match = /(^|\s)\/([\w.-]*)$/.exec(before);
  if (!match) return null;
  const start = before.length - match[2]!.length - 1;
  return { query: match[2]!, start, end: caret };
}

/** Skills whose name starts with the query first, then those containing it; at most `limit`. */
export function matchSkills(skills: readonly SkillOption[], query: string, limit = 8): SkillOption[] {
  const q = query.toLowerCase();
  const starts = skills.filter((s) => s.name.toLowerCase().startsWith(q));
  const contains = skills.filter((s) => !s.name.toLowerCase().startsWith(q) && s.name.toLowerCase().includes(q));
  return [...starts, ...contains].slice(0, limit);
}

/** The draft with the token replaced by `/name ` and the caret after it. */
export function insertSkill(draft: string, at: SlashQuery, name: string): { text: string; caret: number } {
  const inserted = `/${name} `;
  const after = draft.slice(at.end).replace(/^ /, "");
  return { text: draft.slice(0, at.start) + inserted + after, caret: at.start + inserted.length };
}

/** DOM id of option `index` of the menu `menuId` (for aria-activedescendant). */
export const slashOptionId = (menuId: string, index: number) => `${menuId}-${index}`;
