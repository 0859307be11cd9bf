"""Feishu / Lark: the channel, its interactive cards, event decryption, the WebSocket frames,
the tenant token and the long connection."""
