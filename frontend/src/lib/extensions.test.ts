import { describe, expect, it } from "vitest";
import { draftOf, EMPTY_DRAFT, fieldsOf, isHyphenCase, type AgentInfo } from "../api/extensions";
import { parseRoute, pathForRoute } from "./route";

describe("extension pages", () => {
  it("have their own routes", () => {
    for (const page of ["skills", "tools", "agents"] as const) {
      expect(parseRoute(`/settings/${page}`, "")).toEqual({ page });
      expect(pathForRoute({ page })).toBe(`/settings/${page}`);
    }
  });
});

describe("agent names", () => {
  it("follow the server's hyphen-case rule", () => {
    expect(isHyphenCase("sql-helper2")).toBe(true);
    for (const bad of ["", "Bad", "a--b", "-a", "a-", "with space", "x".repeat(65)]) expect(isHyphenCase(bad)).toBe(false);
  });
});

describe("agent form", () => {
  it("sends null for the defaults and the chosen lists otherwise", () => {
    expect(fieldsOf({ ...EMPTY_DRAFT, name: "a", systemPrompt: "  " })).toEqual({
      description: null,
      model: null,
      system_prompt: null,
      tool_groups: null,
      skills: null,
    });
    const draft = { ...EMPTY_DRAFT, name: "a", model: "m", allTools: false, toolGroups: ["file"], allSkills: false, skills: [] };
    expect(fieldsOf(draft)).toMatchObject({ model: "m", tool_groups: ["file"], skills: [] });
  });

  it("round-trips an agent", () => {
    const agent: AgentInfo = {
      name: "x",
      description: "d",
      model: null,
      tool_groups: ["web"],
      skills: null,
      mcp_servers: null,
      subagent_enabled: false,
      system_prompt: "Be brief.",
      soul: "Be brief.",
      assistant_id: "id",
      version: 2,
      created_at: null,
      updated_at: null,
    };
    expect(fieldsOf(draftOf(agent))).toEqual({
      description: "d",
      model: null,
      system_prompt: "Be brief.",
      tool_groups: ["web"],
      skills: null,
    });
  });
});
