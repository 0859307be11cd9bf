// @vitest-environment node
// The API modules take their request and response bodies from the generated schema.d.ts
// (`Schema<"Name">`, see types.ts); a hand-written interface in src/api is either one of the
// few shapes the API does not describe (listed below, with why) or a copy that drifts.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dir = fileURLToPath(new URL("./", import.meta.url));

/** Interfaces in src/api that are not API bodies. */
const NOT_API_BODIES: Record<string, string> = {
  AgentDraft: "the agent form's state",
  ArtifactPiece: "bytes of a Range request",
  AuthFetchOptions: "options of createAuthFetch",
  Gateway: "the React context value",
  McpServer: "the form's reading of a stored server, which the API types as an open object",
  SchemaProperty: "JSON Schema (a channel section's schema), not a body",
  SectionSchema: "JSON Schema (a channel section's schema), not a body",
};

/** Schema name → its property names, read from the generated components.schemas. */
function generatedSchemas(): Map<string, Set<string>> {
  const text = readFileSync(`${dir}schema.d.ts`, "utf-8");
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

/** Interface name → its top-level property names, in every non-test module of src/api. */
function handWrittenInterfaces(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const file of readdirSync(dir)) {
    if (!/\.tsx?$/.test(file) || file.endsWith(".d.ts") || /\.test\.tsx?$/.test(file)) continue;
    const text = readFileSync(`${dir}${file}`, "utf-8");
    for (const match of text.matchAll(/^(?:export )?interface (\w+)[^{]*\{\n([\s\S]*?)\n\}/gm)) {
      const props = new Set<string>();
      for (const line of (match[2] ?? "").split("\n")) {
        const prop = /^ {2}(?:readonly )?([\w$]+)\??: /.exec(line);
        if (prop?.[1]) props.add(prop[1]);
      }
      out.set(match[1] ?? "", props);
    }
  }
  return out;
}

const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));

describe("src/api", () => {
  const schemas = generatedSchemas();
  const interfaces = handWrittenInterfaces();

  it("reads the generated schemas", () => {
    expect(schemas.size).toBeGreaterThan(100);
    expect([...(schemas.get("AuthUser") ?? [])]).toContain("username");
  });

  it("declares no interface for an API body: those are Schema<...> from schema.d.ts", () => {
    const copies = [...interfaces.keys()].filter((name) => !(name in NOT_API_BODIES));
    expect(copies).toEqual([]);
  });

  it("has no listed interface that is a generated schema under another name", () => {
    const twins: string[] = [];
    for (const [name, props] of interfaces) {
      for (const [schema, fields] of schemas) {
        if (schema === name || (props.size > 0 && sameSet(props, fields))) twins.push(`${name} = ${schema}`);
      }
    }
    expect(twins).toEqual([]);
  });
});
