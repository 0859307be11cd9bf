"""Metrics, traces and log context: what the runtime tells operators about itself."""
