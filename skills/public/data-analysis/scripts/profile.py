#!/usr/bin/env python3
"""Profile a CSV/TSV/JSON-lines file: rows, and per column type, missing, distinct, stats."""

from __future__ import annotations

import csv
import json
import statistics
import sys
from collections import Counter
from datetime import datetime

MAX_ROWS = 1_000_000
DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S")


def read_rows(path: str) -> list[dict[str, str]]:
    if path.endswith((".jsonl", ".ndjson")):
        with open(path, encoding="utf-8") as fh:
            return [
                {k: "" if v is None else str(v) for k, v in json.loads(line).items()}
                for line, _ in zip(fh, range(MAX_ROWS))
                if line.strip()
            ]
    with open(path, encoding="utf-8", newline="") as fh:
        sample = fh.read(64 * 1024)
        fh.seek(0)
        if path.endswith(".tsv"):
            dialect: type[csv.Dialect] | csv.Dialect = csv.excel_tab
        else:
            try:
                dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
            except csv.Error:
                dialect = csv.excel
        reader = csv.DictReader(fh, dialect=dialect)
        return [row for row, _ in zip(reader, range(MAX_ROWS))]


def kind(values: list[str]) -> str:
    def all_match(conv) -> bool:
        try:
            for v in values:
                conv(v)
        except ValueError:
            return False
        return True

    if not values:
        return "empty"
    if all_match(int):
        return "integer"
    if all_match(float):
        return "number"
    for fmt in DATE_FORMATS:
        if all_match(lambda v, f=fmt: datetime.strptime(v, f)):
            return f"date ({fmt})"
    return "text"


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: profile.py FILE", file=sys.stderr)
        return 2
    rows = read_rows(sys.argv[1])
    print(f"rows: {len(rows)}")
    if not rows:
        return 0
    for column in rows[0].keys():
        raw = [(r.get(column) or "").strip() for r in rows]
        present = [v for v in raw if v and v.lower() not in ("na", "n/a", "null", "none", "nan")]
        k = kind(present)
        line = f"- {column}: {k}, missing {len(raw) - len(present)}, distinct {len(set(present))}"
        if k in ("integer", "number"):
            nums = [float(v) for v in present]
            line += (
                f", min {min(nums):g}, max {max(nums):g}, mean {statistics.fmean(nums):.4g}, "
                f"median {statistics.median(nums):g}"
            )
        elif k == "text":
            common = ", ".join(f"{v!r} ({n})" for v, n in Counter(present).most_common(5))
            line += f", most common: {common}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
