"""Label offsets for scatter points, so labels neither overlap each other nor the points nor leave the plot."""

from __future__ import annotations

import math

Box = tuple[float, float, float, float]
# Candidate offsets of a label's centre from its point, in pixels (x right, y up): close first, then farther out;
# straight above / below before the sides and the diagonals.
_DIRS = ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1))
_STEPS = (0, 1, 2)  # how far past touching the point: extra label heights (up/down) and 12 px (sideways)


def _overlap(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _outside(b: Box, width: float, height: float) -> float:
    return sum(max(0.0, v) for v in (-b[0], b[2] - width, -b[1], b[3] - height))


def _candidates(w: float, h: float, r: float) -> list[tuple[float, float, bool]]:
    return [(dx * (w / 2 + r + 12 * k), dy * (h / 2 + r + h * k), k > 0) for k in _STEPS for dx, dy in _DIRS]


def place_labels(points: list[tuple[float, float]], names: list[str], size: tuple[float, float] = (480, 250),
                 char_px: float = 9.5, line_px: float = 18, marker_px: float = 9, priority: list[float] | None = None,
                 skip_crowded: bool = False, inside: bool = False) -> list[tuple[float, float, bool] | None]:
    """Where to draw each point's label, for points scaled to 0..1 on both axes of a plot area of about `size`
    pixels: the pixel offset (dx right, dy up) of the label's centre from its point and whether it is set apart
    (to be drawn with a line back to it). Each label keeps off the labels placed before it, off every point and
    inside the plot, as close to its own point as it can; labels go in order of `priority` (default: the longest
    first). With `skip_crowded`, a label that cannot be placed without overlap is None (left to the hover); with
    `inside` too, so is one that would leave the plot."""
    width, height = size
    px = [(x * width, y * height) for x, y in points]
    dots = [(x - marker_px, y - marker_px, x + marker_px, y + marker_px) for x, y in px]
    placed: list[Box] = []
    out: list[tuple[float, float, bool] | None] = [None] * len(points)
    rank = priority if priority is not None else [float(len(n)) for n in names]
    for i in sorted(range(len(points)), key=lambda k: -rank[k]):
        x, y = px[i]
        w = len(names[i]) * char_px + 6
        reach_x, reach_y = w + marker_px + 12 * _STEPS[-1], line_px * (2 + _STEPS[-1]) + marker_px  # farthest candidate
        near = [b for b in placed + dots if b[2] >= x - reach_x and b[0] <= x + reach_x
                and b[3] >= y - reach_y and b[1] <= y + reach_y]

        def cost(off: tuple[float, float, bool], x: float = x, y: float = y, w: float = w, i: int = i,
                 near: list[Box] = near) -> float:
            cx, cy = x + off[0], y + off[1]
            b = (cx - w / 2, cy - line_px / 2, cx + w / 2, cy + line_px / 2)
            hits = sum(_overlap(b, p) for p in near)
            own = math.hypot(cx - x, cy - y)
            closer = any(math.hypot(cx - ox, cy - oy) < own for j, (ox, oy) in enumerate(px) if j != i)
            # overlapping is worst, then leaving the plot, then sitting nearer another point, then distance
            return (1e6 if hits else 0) + hits + 1e3 * _outside(b, width, height) + (300 if closer else 0) + own

        best = min(_candidates(w, line_px, marker_px), key=cost)
        if skip_crowded and (cost(best) >= 1e6 or (inside and cost(best) >= 1e3)):
            continue
        out[i] = best
        cx, cy = x + best[0], y + best[1]
        placed.append((cx - w / 2, cy - line_px / 2, cx + w / 2, cy + line_px / 2))
    return out


def label_annotations(xs: list[float], ys: list[float], texts: list[str], spots: list[tuple[float, float, bool] | None],
                      colors: list[str], standoff: float, font_size: int | None = None) -> list[dict]:
    """Plotly annotation dicts for placed labels (texts already escaped; None spots are skipped): next to the point
    by a pixel shift, or, when set apart, at the end of a thin line (in the point's colour) back to it. With
    `font_size`, the text takes the point's colour too."""
    out = []
    for x, y, text, spot, color in zip(xs, ys, texts, spots, colors, strict=True):
        if spot is None:
            continue
        dx, dy, far = spot
        out.append({"x": x, "y": y, "text": text, "showarrow": far, "xanchor": "center", "yanchor": "middle",
                    **({"font": {"size": font_size, "color": color}} if font_size else {}),
                    **({"ax": dx, "ay": -dy, "arrowhead": 0, "arrowwidth": 1, "arrowcolor": color, "standoff": standoff}
                       if far else {"xshift": dx, "yshift": dy})})
    return out
