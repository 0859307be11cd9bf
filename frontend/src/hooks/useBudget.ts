import { useEffect, useState } from "react";
import { useGateway } from "../api/gateway";
import { fetchBudget, type Budget } from "../api/governance";

/** The user's budget and usage today / this month; refetched when `version` changes. */
export function useBudget(version: number): Budget | null {
  const { fetch } = useGateway();
  const [budget, setBudget] = useState<Budget | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    fetchBudget(fetch, controller.signal)
      .then(setBudget)
      .catch(() => {
        /* no budget endpoint or no access: nothing is shown */
      });
    return () => controller.abort();
  }, [fetch, version]);
  return budget;
}
