// @vitest-environment node
// The committed API types are what openapi-typescript makes of the committed OpenAPI
// document (src/api/openapi.json, written by `pronghorn openapi`; a backend test checks that
// it is the gateway's current one). After an API change: `npm run gen:api`.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = (name: string): string => fileURLToPath(new URL(name, import.meta.url));
const cli = fileURLToPath(new URL("../../node_modules/openapi-typescript/bin/cli.js", import.meta.url));

describe("the generated API types", () => {
  it("are current with the committed OpenAPI document (npm run gen:api)", () => {
    const generated = execFileSync(process.execPath, [cli, here("./openapi.json")], {
      encoding: "utf-8",
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(generated === readFileSync(here("./schema.d.ts"), "utf-8")).toBe(true);
  }, 120_000);

  it("describe the LangGraph bodies with the reference's required fields", () => {
    const types = readFileSync(here("./schema.d.ts"), "utf-8");
    const thread = /\n {8}Thread: \{([\s\S]*?)\n {8}\};/.exec(types)?.[1] ?? "";
    for (const field of ["thread_id: string;", "status: ", "metadata: {"]) {
      expect(thread).toContain(field);
    }
  });
});
