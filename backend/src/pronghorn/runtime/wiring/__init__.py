"""The AppRuntime and how it is built: assembly in dependency order, the components it starts, and
the
background tasks it owns (cron scheduler, approval and graph reload)."""
