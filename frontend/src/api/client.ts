import { Client } from "@langchain/langgraph-sdk";
import type { Fetch } from "./http";

/** Graph id of the built-in agent. */
export const ASSISTANT_ID = "lead_agent";

/**
 * The official SDK client, pointed at the gateway's LangGraph API on this origin.
 * Every request goes through `fetchImpl` (the session's fetch: cookie, CSRF header, 401 handling);
 * no API key is read from the environment (the browser signs in with its session cookie).
 */
export function createClient(fetchImpl?: Fetch, origin: string = window.location.origin): Client {
  return new Client({
    apiUrl: `${origin}/api/langgraph`,
    apiKey: null,
    ...(fetchImpl ? { callerOptions: { fetch: fetchImpl } } : {}),
  });
}
