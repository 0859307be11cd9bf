"""Telegram: the channel (Bot API long polling)."""
