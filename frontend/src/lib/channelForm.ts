/**
 * A settings form for any chat platform, drawn from the JSON schema the gateway sends with
 * its `channels.<name>` section: scalar fields become inputs (secrets as password inputs
 * that start empty: leaving one empty keeps the stored value), lists of strings (ids) one
 * input of comma-separated values, nested settings (`access`) are kept as they are.
 */
import { MASK, sectionSchema, type ChannelSection, type SchemaProperty } from "../api/channels";

export type FieldKind = "text" | "secret" | "number" | "integer" | "boolean" | "list";

export interface FormField {
  key: string;
  label: string;
  kind: FieldKind;
  description: string;
  required: boolean;
  /** Shown under "More settings" (optional, not a secret). */
  advanced: boolean;
  defaultValue: unknown;
}

export type Draft = Record<string, string | boolean>;

const KINDS: Record<string, FieldKind> = { string: "text", number: "number", integer: "integer", boolean: "boolean", list: "list" };

function scalarType(prop: SchemaProperty): string | null {
  if (prop.type === "array") return prop.items?.type === "string" ? "list" : null;
  if (prop.type) return prop.type;
  const types = (prop.anyOf ?? []).map((p) => p.type).filter((t): t is string => !!t && t !== "null");
  return types.length === 1 ? (types[0] ?? null) : null;
}

const ACRONYMS = new Set(["api", "url", "id", "http", "ws"]);

/** `bot_token` → "Bot token", `api_base_url` → "API base URL", `poll_timeout_s` → "Poll timeout (s)". */
export function labelOf(key: string): string {
  const words = key
    .replace(/_s$/, "_(s)")
    .split("_")
    .map((w) => (w === "ids" ? "IDs" : ACRONYMS.has(w) ? w.toUpperCase() : w));
  const text = words.join(" ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The inputs of a section; `enabled` is the card's toggle, not a form field. */
export function formFields(section: ChannelSection): FormField[] {
  const schema = sectionSchema(section);
  const required = new Set(schema.required ?? []);
  const fields: FormField[] = [];
  for (const [key, prop] of Object.entries(schema.properties)) {
    if (key === "enabled") continue;
    const type = scalarType(prop);
    const base = type ? KINDS[type] : undefined;
    if (!base) continue; // objects (access) and other lists are kept, not edited here
    const secret = section.secrets.includes(key) || prop.format === "password";
    const kind: FieldKind = secret ? "secret" : base;
    fields.push({
      key,
      label: labelOf(key),
      kind,
      description: prop.description ?? "",
      required: required.has(key),
      advanced: !required.has(key) && !secret && key !== "api_base_url",
      defaultValue: prop.default,
    });
  }
  return fields;
}

/** The form's starting values: stored secrets empty, lists comma-separated, everything else
 * as written. */
export function toDraft(section: ChannelSection, fields: FormField[]): Draft {
  const draft: Draft = {};
  for (const f of fields) {
    const value = section.config[f.key];
    if (f.kind === "boolean") draft[f.key] = typeof value === "boolean" ? value : f.defaultValue === true;
    else if (f.kind === "secret") draft[f.key] = value === MASK || value == null ? "" : String(value);
    else if (f.kind === "list") draft[f.key] = Array.isArray(value) ? value.map(String).join(", ") : "";
    else draft[f.key] = value == null ? "" : String(value);
  }
  return draft;
}

/** Whether a secret has a value stored behind the mask. */
export function isStored(section: ChannelSection, key: string): boolean {
  return section.config[key] === MASK;
}

/** The section to save: the stored one (nested settings kept) with the form's values; an
 * empty secret stays `***` (kept) when one is stored; an empty optional field is left out
 * (its default applies). Throws on a number that is not one. */
export function fromDraft(section: ChannelSection, fields: FormField[], draft: Draft, enabled: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { ...section.config };
  for (const f of fields) {
    const value = draft[f.key];
    if (f.kind === "boolean") {
      if (value !== f.defaultValue || f.key in section.config) out[f.key] = value === true;
      continue;
    }
    const text = typeof value === "string" ? value.trim() : "";
    if (f.kind === "list") {
      const items = text.split(/[\s,]+/).filter(Boolean);
      if (items.length || f.key in section.config) out[f.key] = items;
      continue;
    }
    if (!text) {
      if (f.kind === "secret" && isStored(section, f.key)) out[f.key] = MASK;
      else delete out[f.key];
      continue;
    }
    if (f.kind === "number" || f.kind === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n) || (f.kind === "integer" && !Number.isInteger(n))) {
        throw new Error(`${f.label} must be ${f.kind === "integer" ? "a whole number" : "a number"}`);
      }
      out[f.key] = n;
    } else {
      out[f.key] = text;
    }
  }
  out.enabled = enabled;
  return out;
}

/** A platform's name as people write it. */
export function platformLabel(name: string): string {
  const known: Record<string, string> = {
    telegram: "Telegram",
    slack: "Slack",
    discord: "Discord",
    feishu: "Feishu / Lark",
    dingtalk: "DingTalk",
    wecom: "WeCom",
  };
  return known[name] ?? labelOf(name);
}
