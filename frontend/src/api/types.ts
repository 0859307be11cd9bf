/**
 * The gateway's request and response bodies, as generated from its OpenAPI document
 * (`npm run gen:api` writes openapi.json and schema.d.ts from the backend's pydantic models).
 * API modules name these (`type User = Schema<"AuthUser">`) instead of declaring copies;
 * `types.node.test.ts` fails on a hand-written interface that re-declares one.
 */
import type { components } from "./schema";

export type Schemas = components["schemas"];
export type Schema<Name extends keyof Schemas> = Schemas[Name];
