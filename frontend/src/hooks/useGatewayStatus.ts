import { useEffect, useState } from "react";
import type { Fetch } from "../api/http";
import { checkHealth, fetchConfigStatus, type ConfigStatus } from "../api/rest";

export interface GatewayStatus {
  /** null until the first check finishes. */
  reachable: boolean | null;
  config: ConfigStatus | null;
}

/** Polls /health and /api/config/status; faster while the gateway is down. */
export function useGatewayStatus(fetch: Fetch, intervalMs = 15000, downIntervalMs = 3000): GatewayStatus {
  const [status, setStatus] = useState<GatewayStatus>({ reachable: null, config: null });

  useEffect(() => {
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const controller = new AbortController();

    const tick = async () => {
      let reachable = false;
      let config: ConfigStatus | null = null;
      try {
        await checkHealth(fetch, controller.signal);
        reachable = true;
        config = await fetchConfigStatus(fetch, controller.signal).catch(() => null);
      } catch {
        /* unreachable: reachable stays false */
      }
      if (cancelled) return;
      setStatus({ reachable, config });
      timer = setTimeout(tick, reachable ? intervalMs : downIntervalMs);
    };
    void tick();
    const onOnline = () => {
      if (timer) clearTimeout(timer);
      void tick();
    };
    window.addEventListener("online", onOnline);
    return () => {
      cancelled = true;
      controller.abort();
      if (timer) clearTimeout(timer);
      window.removeEventListener("online", onOnline);
    };
  }, [fetch, intervalMs, downIntervalMs]);

  return status;
}
