import { describe, expect, it } from "vitest";
import type { ChannelSection } from "../api/channels";
import { formFields, fromDraft, labelOf, platformLabel, toDraft } from "./channelForm";

const telegram = (config: Record<string, unknown>, configured = true): ChannelSection => ({
  name: "telegram",
  configured,
  config,
  secrets: ["bot_token"],
  schema: {
    description: "A Telegram bot",
    required: ["bot_token"],
    properties: {
      enabled: { type: "boolean", default: true },
      access: { anyOf: [{ $ref: "#/$defs/ChannelAccess" }, { type: "null" }] },
      assistant_id: { type: "string", default: "lead_agent" },
      edit_interval_s: { type: "number", default: 1 },
      bot_token: { type: "string", format: "password", writeOnly: true } as never,
      api_base_url: { type: "string", default: "https://api.telegram.org" },
      poll_timeout_s: { type: "integer", default: 30 },
    },
  },
});

const discord = (config: Record<string, unknown>): ChannelSection => ({
  name: "discord",
  configured: true,
  config,
  secrets: ["bot_token"],
  schema: {
    required: ["bot_token"],
    properties: {
      bot_token: { type: "string", format: "password" },
      allowed_channel_ids: { type: "array", items: { type: "string" }, default: [] },
      weights: { type: "array", items: { type: "number" } },
    },
  },
});

describe("channel settings form", () => {
  it("edits a list of ids as comma-separated text and saves it as a list", () => {
    const section = discord({ bot_token: "***", allowed_channel_ids: ["1", "2"], weights: [1] });
    const fields = formFields(section);
    expect(fields.map((f) => f.key)).toEqual(["bot_token", "allowed_channel_ids"]); // numbers' lists kept
    expect(fields[1]).toMatchObject({ kind: "list", label: "Allowed channel IDs", advanced: true });
    const draft = toDraft(section, fields);
    expect(draft.allowed_channel_ids).toBe("1, 2");
    const out = fromDraft(section, fields, { ...draft, allowed_channel_ids: " 3,4  5 ,, " }, true);
    expect(out).toEqual({ bot_token: "***", allowed_channel_ids: ["3", "4", "5"], weights: [1], enabled: true });
    expect(fromDraft(section, fields, { ...draft, allowed_channel_ids: "" }, true).allowed_channel_ids).toEqual([]);
    const fresh = discord({ bot_token: "t" });
    expect(fromDraft(fresh, fields, toDraft(fresh, fields), true)).toEqual({ bot_token: "t", enabled: true });
  });

  it("draws scalar fields from the schema, secrets as secrets, nested settings left out", () => {
    const fields = formFields(telegram({}));
    const byKey = Object.fromEntries(fields.map((f) => [f.key, f]));
    expect(Object.keys(byKey)).toEqual(["assistant_id", "edit_interval_s", "bot_token", "api_base_url", "poll_timeout_s"]);
    expect(byKey.bot_token).toMatchObject({ kind: "secret", required: true, advanced: false, label: "Bot token" });
    expect(byKey.api_base_url?.advanced).toBe(false);
    expect(byKey.poll_timeout_s).toMatchObject({ kind: "integer", advanced: true });
    expect(byKey.edit_interval_s?.kind).toBe("number");
  });

  it("starts a stored secret empty and saves it back as the mask, keeping nested settings", () => {
    const section = telegram({ bot_token: "***", access: { mode: "open" }, poll_timeout_s: 5 });
    const fields = formFields(section);
    const draft = toDraft(section, fields);
    expect(draft.bot_token).toBe("");
    expect(draft.poll_timeout_s).toBe("5");
    const out = fromDraft(section, fields, { ...draft, poll_timeout_s: "10" }, true);
    expect(out).toEqual({ bot_token: "***", access: { mode: "open" }, poll_timeout_s: 10, enabled: true });
  });

  it("shows an environment reference as written and sends a new secret as typed", () => {
    const section = telegram({ bot_token: "${TG_TOKEN}" });
    const fields = formFields(section);
    expect(toDraft(section, fields).bot_token).toBe("${TG_TOKEN}");
    const out = fromDraft(section, fields, { ...toDraft(section, fields), bot_token: " 123:abc " }, false);
    expect(out.bot_token).toBe("123:abc");
    expect(out.enabled).toBe(false);
  });

  it("leaves empty optional fields out and refuses a number that is not one", () => {
    const section = telegram({}, false);
    const fields = formFields(section);
    const draft = { ...toDraft(section, fields), bot_token: "t" };
    expect(fromDraft(section, fields, draft, true)).toEqual({ bot_token: "t", enabled: true });
    expect(() => fromDraft(section, fields, { ...draft, poll_timeout_s: "1.5" }, true)).toThrow("Poll timeout (s) must be a whole number");
    expect(() => fromDraft(section, fields, { ...draft, edit_interval_s: "soon" }, true)).toThrow("must be a number");
  });

  it("names platforms", () => {
    expect(platformLabel("feishu")).toBe("Feishu / Lark");
    expect(platformLabel("dingtalk")).toBe("DingTalk");
    expect(platformLabel("wecom")).toBe("WeCom");
    expect(platformLabel("matrix_bot")).toBe("Matrix bot");
    expect(labelOf("signing_secret")).toBe("Signing secret");
    expect(labelOf("api_base_url")).toBe("API base URL");
    expect(labelOf("assistant_id")).toBe("Assistant ID");
  });
});
