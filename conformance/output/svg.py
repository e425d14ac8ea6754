"""Tiny SVG charts for the conformance report (no plotting dependency).

Two charts are enough for the report: a bar chart (labelled counts, e.g. cases per feature or
failures per oracle) and a histogram (e.g. reconfiguration delays). Both return a complete
``<svg>`` element as a string, inlined into the Markdown report (GitHub and most viewers
render inline SVG in Markdown; the HTML report embeds it as is).
"""

from __future__ import annotations

from html import escape
from typing import Sequence

_FONT = 'font-family="sans-serif" font-size="11"'


def bar_chart(title: str, bars: Sequence[tuple[str, float]], *, width: int = 560, colour: str = "#4878a8") -> str:
    """Horizontal bars, one per (label, value), with the value printed at the bar's end."""
    row, left, top = 20, 190, 28
    height = top + row * max(1, len(bars)) + 10
    peak = max((v for _, v in bars), default=0.0) or 1.0
    span = width - left - 60
    parts = [_header(width, height, title)]
    for i, (label, value) in enumerate(bars):
        y = top + i * row
        length = span * value / peak
        parts.append(f'<text x="{left - 6}" y="{y + 13}" text-anchor="end" {_FONT}>{escape(label)}</text>')
        parts.append(f'<rect x="{left}" y="{y + 3}" width="{length:.1f}" height="{row - 6}" fill="{colour}"/>')
        parts.append(f'<text x="{left + length + 4:.1f}" y="{y + 13}" {_FONT}>{_number(value)}</text>')
    if not bars:
        parts.append(f'<text x="{left}" y="{top + 13}" {_FONT}>(no data)</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def histogram(title: str, values: Sequence[float], *, bins: int = 12, unit: str = "", width: int = 560) -> str:
    """A histogram of ``values`` in ``bins`` equal-width bins, with the range on the x axis."""
    height, left, bottom, top = 200, 40, 30, 28
    parts = [_header(width, height, title)]
    if not values:
        parts.append(f'<text x="{left}" y="{top + 20}" {_FONT}>(no data)</text></svg>')
        return "\n".join(parts)
    lo, hi = min(values), max(values)
    step = (hi - lo) / bins if hi > lo else 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / step))] += 1
    peak = max(counts)
    plot_w, plot_h = width - left - 20, height - top - bottom
    bar_w = plot_w / bins
    for i, count in enumerate(counts):
        h = plot_h * count / peak
        x = left + i * bar_w
        parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" '
                     f'fill="#59a14f"><title>{count}</title></rect>')
    base = top + plot_h
    parts.append(f'<line x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" stroke="#333"/>')
    parts.append(f'<text x="{left}" y="{base + 15}" {_FONT}>{_number(lo)} {escape(unit)}</text>')
    parts.append(f'<text x="{left + plot_w}" y="{base + 15}" text-anchor="end" {_FONT}>{_number(hi)} '
                 f'{escape(unit)}</text>')
    parts.append(f'<text x="{left - 4}" y="{top + 10}" text-anchor="end" {_FONT}>{peak}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _header(width: int, height: int, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">\n<text x="8" y="16" font-family="sans-serif" font-size="13" '
            f'font-weight="bold">{escape(title)}</text>')


def _number(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"
