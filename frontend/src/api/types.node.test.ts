// @vitest-environment node
// The API modules take their request and response bodies from the generated schema.d.ts
// (`Schema<"Name">`, see types.ts); a hand-written interface in src/api is either one of the
// few shapes the API does not describe (listed below, with why) or a copy that drifts. The
// rest of src (components, hooks, lib) holds view types: one with exactly a generated
// schema's fields is a copy too, unless it is listed below.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../", import.meta.url));

/** Interfaces in src/api that are not API bodies. */
const NOT_API_BODIES: Record<string, string> = {
  AgentDraft: "the agent form's state",
  ArtifactPiece: "bytes of a Range request",
  AuthFetchOptions: "options of createAuthFetch",
  Gateway: "the React context value",
  McpServer:
    "the form's reading of a stored server: the API types it as an open object (the stored YAML, not a model), which it extends",
  SchemaProperty: "JSON Schema (a channel section's schema), not a body",
  SectionSchema: "JSON Schema (a channel section's schema), not a body",
};

/** Interfaces outside src/api (`file name`) with a generated schema's fields that are not API bodies. */
const SAME_FIELDS_NOT_BODIES: Record<string, string> = {
  "lib/subagents.ts TaskUsage":
    "a sub-agent's usage from the `task_*` custom stream events, which the OpenAPI document does not describe",
};

/** Schema name → its property names, read from the generated components.schemas. */
function generatedSchemas(): Map<string, Set<string>> {
  const text = readFileSync(`${src}api/schema.d.ts`, "utf-8");
  const start = text.indexOf("\n    schemas: {\n");
  const end = text.indexOf("\n    responses: ", start);
  const out = new Map<string, Set<string>>();
  let current: Set<string> | null = null;
  for (const line of text.slice(start, end).split("\n")) {
    const schema = /^ {8}(\w+): \{$/.exec(line);
    if (schema?.[1]) {
      current = new Set<string>();
      out.set(schema[1], current);
      continue;
    }
    const prop = /^ {12}"?([\w$-]+)"?\??: /.exec(line);
    if (prop?.[1] && current) current.add(prop[1]);
  }
  return out;
}

interface Declared {
  /** The file, relative to src. */
  file: string;
  name: string;
  /** Its top-level property names. */
  props: Set<string>;
}

/** Every module of src (not tests, not declarations), relative to src. */
function modules(dir = ""): string[] {
  return readdirSync(`${src}${dir}`, { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory()) return modules(`${path}/`);
    return /\.tsx?$/.test(path) && !path.endsWith(".d.ts") && !/\.test\.tsx?$/.test(path) ? [path] : [];
  });
}

/** The interfaces declared in src. */
function handWrittenInterfaces(): Declared[] {
  const out: Declared[] = [];
  for (const file of modules()) {
    const text = readFileSync(`${src}${file}`, "utf-8");
    for (const match of text.matchAll(/^(?:export )?interface (\w+)[^{]*\{\n([\s\S]*?)\n\}/gm)) {
      const props = new Set<string>();
      for (const line of (match[2] ?? "").split("\n")) {
        const prop = /^ {2}(?:readonly )?([\w$]+)\??: /.exec(line);
        if (prop?.[1]) props.add(prop[1]);
      }
      out.push({ file, name: match[1] ?? "", props });
    }
  }
  return out;
}

const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));

describe("hand-written types", () => {
  const schemas = generatedSchemas();
  const interfaces = handWrittenInterfaces();
  const inApi = interfaces.filter((i) => i.file.startsWith("api/"));
  const elsewhere = interfaces.filter((i) => !i.file.startsWith("api/"));

  it("reads the generated schemas and the interfaces of every folder of src", () => {
    expect(schemas.size).toBeGreaterThan(100);
    expect([...(schemas.get("AuthUser") ?? [])]).toContain("username");
    const seen = (file: string, name: string) => interfaces.find((i) => i.file === file && i.name === name);
    expect([...(seen("components/settings/McpPage.tsx", "Draft")?.props ?? [])]).toContain("headers");
    expect(seen("api/mcp.ts", "McpServer")?.props.has("tool_call_timeout_s")).toBe(true);
    expect(seen("hooks/useResource.ts", "Poll")).toBeDefined();
  });

  it("declare no interface in src/api for an API body: those are Schema<...> from schema.d.ts", () => {
    const copies = inApi.map((i) => i.name).filter((name) => !(name in NOT_API_BODIES));
    expect(copies).toEqual([]);
  });

  it("have no listed interface in src/api that is a generated schema under another name", () => {
    const twins: string[] = [];
    for (const { name, props } of inApi) {
      for (const [schema, fields] of schemas) {
        if (schema === name || (props.size > 0 && sameSet(props, fields))) twins.push(`${name} = ${schema}`);
      }
    }
    expect(twins).toEqual([]);
  });

  it("have no view type in components, hooks or lib with exactly a generated schema's fields", () => {
    // one field ({status}, {items}) is too common a shape to call a copy
    const twins: string[] = [];
    for (const { file, name, props } of elsewhere) {
      if (props.size < 2 || `${file} ${name}` in SAME_FIELDS_NOT_BODIES) continue;
      for (const [schema, fields] of schemas) {
        if (sameSet(props, fields)) twins.push(`${file} ${name} = ${schema}`);
      }
    }
    expect(twins).toEqual([]);
  });

  it("list only interfaces that exist", () => {
    const api = new Set(inApi.map((i) => i.name));
    const other = new Set(elsewhere.map((i) => `${i.file} ${i.name}`));
    const stale = [
      ...Object.keys(NOT_API_BODIES).filter((name) => !api.has(name)),
      ...Object.keys(SAME_FIELDS_NOT_BODIES).filter((key) => !other.has(key)),
    ];
    expect(stale).toEqual([]);
  });
});
