"""How JSON columns are encoded and decoded: orjson, on every engine of the app.

SQLAlchemy's JSON type defaults to the standard library's `json`, which costs several times
more per value (a run stores its kwargs, metadata and the thread's values on each run) and
writes `NaN`/`Infinity`, which SQLite's JSON functions reject. The text is compact JSON; a
`str`, as the drivers (sqlite3, aiosqlite, psycopg) expect for JSON parameters.
"""

from __future__ import annotations

import orjson


def json_dumps(value: object) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def json_loads(text: str | bytes) -> object:
    return orjson.loads(text)
