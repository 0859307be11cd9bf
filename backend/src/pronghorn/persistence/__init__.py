"""SQL persistence: engine, tables, repositories, migrations."""
