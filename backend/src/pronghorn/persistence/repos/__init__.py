"""Repositories: synchronous units of work over a Connection (run with Database.write or
Database.read), portable across SQLite and PostgreSQL."""
