import type { GatewayStatus } from "../hooks/useGatewayStatus";

interface Props {
  status: GatewayStatus;
}

/** A banner when the gateway is unreachable, or its config failed to load / needs a restart. */
export function StatusBanner({ status }: Props) {
  if (status.reachable === false) {
    return (
      <div className="banner banner-error" role="alert">
        Cannot reach the Pronghorn gateway. Retrying…
      </div>
    );
  }
  const config = status.config;
  if (config?.last_error) {
    return (
      <div className="banner banner-error" role="alert">
        <strong>Config error:</strong> {config.last_error} <span className="banner-note">(the previous config is still in use)</span>
      </div>
    );
  }
  if (config && config.restart_required.length > 0) {
    return (
      <div className="banner banner-warn" role="status">
        Restart the gateway to apply: {config.restart_required.join(", ")}
      </div>
    );
  }
  return null;
}
