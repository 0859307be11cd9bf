import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { StatusBanner } from "./StatusBanner";

const config = { version_hash: "h", loaded_at: "now", source_path: "config.yaml", last_error: null, restart_required: [] };

describe("StatusBanner", () => {
  it("is empty while healthy or unknown", () => {
    const { container } = render(<StatusBanner status={{ reachable: true, config }} />);
    expect(container).toBeEmptyDOMElement();
    render(<StatusBanner status={{ reachable: null, config: null }} />);
  });

  it("reports an unreachable gateway", () => {
    render(<StatusBanner status={{ reachable: false, config: null }} />);
    expect(screen.getByRole("alert")).toHaveTextContent("Cannot reach the Pronghorn gateway");
  });

  it("reports a config error and restart-required fields", () => {
    const { rerender } = render(<StatusBanner status={{ reachable: true, config: { ...config, last_error: "models.0.name: required" } }} />);
    expect(screen.getByRole("alert")).toHaveTextContent("Config error: models.0.name: required");
    rerender(<StatusBanner status={{ reachable: true, config: { ...config, restart_required: ["server.port"] } }} />);
    expect(screen.getByRole("status")).toHaveTextContent("Restart the gateway to apply: server.port");
  });
});
