"""The service layer every way in calls (HTTP routers, IM channels, protocols, the embedded
client): threads, runs, assistants, crons, uploads, feedback and the rest, each for a principal."""
