import type { Client } from "@langchain/langgraph-sdk";
import { createContext, useContext } from "react";
import type { Fetch } from "./http";

/** What talks to the gateway for the signed-in session: the SDK client and the REST fetch. */
export interface Gateway {
  client: Client;
  fetch: Fetch;
}

export const GatewayContext = createContext<Gateway | null>(null);

/** The session's gateway; only components under the auth gate may call this. */
export function useGateway(): Gateway {
  const gateway = useContext(GatewayContext);
  if (!gateway) throw new Error("useGateway must be used inside <GatewayContext.Provider>");
  return gateway;
}
