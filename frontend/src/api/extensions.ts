/** The gateway's extension API: skills (/api/skills), tools (/api/tools), custom agents (/api/agents). */

import { errorFrom, type Fetch } from "./http";
import type { Schema } from "./types";

export type SkillInfo = Schema<"SkillInfo">;
export type SkillDetail = Schema<"SkillDetail">;
export type SkillProblem = Schema<"SkillProblem">;
export type SkillsResponse = Schema<"SkillList">;
export type ToolInfo = Schema<"ToolInfo">;
export type ToolsResponse = Schema<"ToolCatalog">;
export type AgentInfo = Schema<"Agent">;
/** What the agent form sends; `null` resets a field to the default (all tools, all skills, ...). */
export type AgentFields = Pick<Schema<"AgentUpdate">, "description" | "model" | "system_prompt" | "tool_groups" | "skills">;

export const TOOL_GROUPS = ["file", "shell", "web", "interaction", "custom", "mcp"] as const;

async function call<T>(fetch: Fetch, method: string, url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  if (!response.ok) throw await errorFrom(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

const skillUrl = (name: string) => `/api/skills/${encodeURIComponent(name)}`;
const agentUrl = (name: string) => `/api/agents/${encodeURIComponent(name)}`;

export function listSkills(fetch: Fetch): Promise<SkillsResponse> {
  return call<SkillsResponse>(fetch, "GET", "/api/skills");
}

export function getSkill(fetch: Fetch, name: string): Promise<SkillDetail> {
  return call<SkillDetail>(fetch, "GET", skillUrl(name));
}

export function setSkillEnabled(fetch: Fetch, name: string, enabled: boolean): Promise<SkillInfo> {
  return call<SkillInfo>(fetch, "PUT", skillUrl(name), { enabled } satisfies Schema<"SkillToggle">);
}

export async function installSkill(fetch: Fetch, file: File): Promise<SkillInfo> {
  const form = new FormData();
  form.append("file", file, file.name);
  const response = await fetch("/api/skills/install", { method: "POST", body: form, headers: { Accept: "application/json" } });
  if (!response.ok) throw await errorFrom(response);
  return ((await response.json()) as Schema<"SkillInstalled">).skill;
}

export function deleteCustomSkill(fetch: Fetch, name: string): Promise<void> {
  return call<void>(fetch, "DELETE", `/api/skills/custom/${encodeURIComponent(name)}`);
}

export function listTools(fetch: Fetch): Promise<ToolsResponse> {
  return call<ToolsResponse>(fetch, "GET", "/api/tools");
}

export async function listAgents(fetch: Fetch): Promise<AgentInfo[]> {
  const response = await fetch("/api/agents", { headers: { Accept: "application/json" } });
  if (!response.ok) throw await errorFrom(response);
  return ((await response.json()) as Schema<"AgentList">).agents;
}

export function createAgent(fetch: Fetch, name: string, fields: AgentFields): Promise<AgentInfo> {
  return call<AgentInfo>(fetch, "POST", "/api/agents", { name, ...fields } satisfies Schema<"AgentCreate">);
}

export function updateAgent(fetch: Fetch, name: string, fields: AgentFields): Promise<AgentInfo> {
  return call<AgentInfo>(fetch, "PUT", agentUrl(name), fields satisfies Schema<"AgentUpdate">);
}

export function deleteAgent(fetch: Fetch, name: string): Promise<void> {
  return call<void>(fetch, "DELETE", agentUrl(name));
}

/** A valid agent or skill name: hyphen-case, at most 64 characters (the server's rule). */
export function isHyphenCase(name: string): boolean {
  return name.length > 0 && name.length <= 64 && /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name);
}

export interface AgentDraft {
  name: string;
  description: string;
  model: string;
  systemPrompt: string;
  allTools: boolean;
  toolGroups: string[];
  allSkills: boolean;
  skills: string[];
}

export const EMPTY_DRAFT: AgentDraft = {
  name: "",
  description: "",
  model: "",
  systemPrompt: "",
  allTools: true,
  toolGroups: [],
  allSkills: true,
  skills: [],
};

export function draftOf(agent: AgentInfo): AgentDraft {
  return {
    name: agent.name,
    description: agent.description ?? "",
    model: agent.model ?? "",
    systemPrompt: agent.system_prompt ?? "",
    allTools: agent.tool_groups === null,
    toolGroups: agent.tool_groups ?? [],
    allSkills: agent.skills === null,
    skills: agent.skills ?? [],
  };
}

/** The request body of a draft: empty text and "all" become null (the defaults). */
export function fieldsOf(draft: AgentDraft): AgentFields {
  return {
    description: draft.description.trim() || null,
    model: draft.model || null,
    system_prompt: draft.systemPrompt.trim() || null,
    tool_groups: draft.allTools ? null : draft.toolGroups,
    skills: draft.allSkills ? null : draft.skills,
  };
}
