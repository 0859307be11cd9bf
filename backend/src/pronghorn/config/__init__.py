"""Configuration: schema, loading, hot reload."""
