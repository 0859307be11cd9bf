import { Client } from "@langchain/langgraph-sdk";

/** Graph id of the built-in agent. */
export const ASSISTANT_ID = "lead_agent";

/** The official SDK client, pointed at the gateway's LangGraph API on this origin. */
export function createClient(origin: string = window.location.origin): Client {
  return new Client({ apiUrl: `${origin}/api/langgraph` });
}
