"""Repositories: small functions over an AsyncConnection, portable across SQLite and PostgreSQL."""
