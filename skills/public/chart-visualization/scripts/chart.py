#!/usr/bin/env python3
"""Render a bar, line or pie chart from a JSON spec to a standalone SVG (standard library)."""

from __future__ import annotations

import json
import math
import sys
from html import escape

W, H = 800, 480
LEFT, RIGHT, TOP, BOTTOM = 80, 160, 60, 70
COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1"]


def fail(message: str) -> None:
    print(f"chart.py: {message}", file=sys.stderr)
    sys.exit(1)


def load(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            spec = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        fail(f"cannot read {path}: {exc}")
    if spec.get("type") not in ("bar", "line", "pie"):
        fail("'type' must be bar, line or pie")
    labels = spec.get("labels")
    series = spec.get("series")
    if not isinstance(labels, list) or not labels:
        fail("'labels' must be a non-empty list")
    if not isinstance(series, list) or not series:
        fail("'series' must be a non-empty list of {name, values}")
    for s in series:
        values = s.get("values")
        if not isinstance(values, list) or len(values) != len(labels):
            fail(f"series {s.get('name')!r} needs exactly {len(labels)} values")
        if not all(isinstance(v, (int, float)) for v in values):
            fail(f"series {s.get('name')!r} has a value that is not a number")
    if spec["type"] == "pie" and (len(series) != 1 or min(series[0]["values"]) < 0):
        fail("a pie chart takes one series of non-negative values")
    return spec


def nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    step = 10 ** math.floor(math.log10(value))
    for m in (1, 2, 2.5, 5, 10):
        if value <= m * step:
            return m * step
    return 10 * step


def fmt(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def text(x: float, y: float, s: str, size: int = 12, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" {extra}>{escape(s)}</text>'


def axes_chart(spec: dict) -> list[str]:
    labels, series = spec["labels"], spec["series"]
    lo = min(0.0, min(min(s["values"]) for s in series))
    hi = nice_max(max(max(s["values"]) for s in series))
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def y_of(v: float) -> float:
        return TOP + ph - (v - lo) / (hi - lo) * ph

    out = []
    for i in range(6):
        v = lo + (hi - lo) * i / 5
        y = y_of(v)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(text(LEFT - 8, y + 4, fmt(v), 11, "end"))
    slot = pw / len(labels)
    for i, label in enumerate(labels):
        out.append(text(LEFT + slot * (i + 0.5), TOP + ph + 20, str(label), 11))
    if spec["type"] == "bar":
        bw = slot * 0.8 / len(series)
        for j, s in enumerate(series):
            for i, v in enumerate(s["values"]):
                x = LEFT + slot * i + slot * 0.1 + bw * j
                y0, y1 = y_of(max(v, 0)), y_of(min(v, 0))
                out.append(f'<rect x="{x:.1f}" y="{y0:.1f}" width="{bw:.1f}" height="{max(y1 - y0, 0.5):.1f}" fill="{COLORS[j % 7]}"/>')
                out.append(text(x + bw / 2, y0 - 4, fmt(v), 10))
    else:
        for j, s in enumerate(series):
            pts = " ".join(f"{LEFT + slot * (i + 0.5):.1f},{y_of(v):.1f}" for i, v in enumerate(s["values"]))
            out.append(f'<polyline points="{pts}" fill="none" stroke="{COLORS[j % 7]}" stroke-width="2.5"/>')
            for i, v in enumerate(s["values"]):
                out.append(f'<circle cx="{LEFT + slot * (i + 0.5):.1f}" cy="{y_of(v):.1f}" r="3.5" fill="{COLORS[j % 7]}"/>')
    out.append(f'<line x1="{LEFT}" y1="{y_of(0):.1f}" x2="{LEFT + pw}" y2="{y_of(0):.1f}" stroke="#333"/>')
    if spec.get("x_label"):
        out.append(text(LEFT + pw / 2, H - 20, spec["x_label"], 12))
    if spec.get("y_label"):
        out.append(text(20, TOP + ph / 2, spec["y_label"], 12, extra=f'transform="rotate(-90 20 {TOP + ph / 2})"'))
    out += legend([s.get("name", f"series {j + 1}") for j, s in enumerate(series)])
    return out


def legend(names: list[str]) -> list[str]:
    out = []
    for j, name in enumerate(names):
        y = TOP + 20 * j
        out.append(f'<rect x="{W - RIGHT + 20}" y="{y}" width="12" height="12" fill="{COLORS[j % 7]}"/>')
        out.append(text(W - RIGHT + 38, y + 11, str(name), 12, "start"))
    return out


def pie_chart(spec: dict) -> list[str]:
    values = spec["series"][0]["values"]
    total = sum(values) or 1.0
    cx, cy, r = LEFT + (W - LEFT - RIGHT) / 2, TOP + (H - TOP - BOTTOM) / 2, (H - TOP - BOTTOM) / 2
    out, angle = [], -math.pi / 2
    for i, v in enumerate(values):
        sweep = 2 * math.pi * v / total
        x1, y1 = cx + r * math.cos(angle), cy + r * math.sin(angle)
        x2, y2 = cx + r * math.cos(angle + sweep), cy + r * math.sin(angle + sweep)
        large = 1 if sweep > math.pi else 0
        out.append(f'<path d="M{cx:.1f},{cy:.1f} L{x1:.1f},{y1:.1f} A{r:.1f},{r:.1f} 0 {large} 1 {x2:.1f},{y2:.1f} Z" fill="{COLORS[i % 7]}" stroke="#fff"/>')
        mid = angle + sweep / 2
        out.append(text(cx + r * 0.65 * math.cos(mid), cy + r * 0.65 * math.sin(mid), f"{v / total:.0%}", 12, extra='fill="#fff"'))
        angle += sweep
    return out + legend([str(label) for label in spec["labels"]])


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: chart.py SPEC.json OUT.svg", file=sys.stderr)
        return 2
    spec = load(sys.argv[1])
    body = pie_chart(spec) if spec["type"] == "pie" else axes_chart(spec)
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif">',
        '<rect width="100%" height="100%" fill="#fff"/>',
        text(W / 2, 30, spec.get("title", ""), 18, extra='font-weight="bold"'),
        *body,
        "</svg>",
    ]
    with open(sys.argv[2], "w", encoding="utf-8") as fh:
        fh.write("\n".join(svg) + "\n")
    print(f"wrote {sys.argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
