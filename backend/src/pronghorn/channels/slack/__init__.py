"""Slack: the channel and its Socket Mode connection."""
