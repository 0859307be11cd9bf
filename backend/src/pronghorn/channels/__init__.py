"""IM channels: bots on chat platforms that talk to the agent, inside the gateway process.

One job per module: `transport` (the platform contract) with `telegram` and `slack`
implementations, `render` (Markdown → platform text, splitting), `policy` (who may talk),
`commands`, `dispatcher` (dedupe, access, commands, chat → thread), `driver` (one run:
stream by edits, final reply, files, clarifications), `channel` (one running channel: queue
and workers) and `manager` (every channel, hot reload, status). See docs/channels.md.
"""
