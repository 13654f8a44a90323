"""SVG pictures for the loop page: a loop's port map and a trace entry's per-step plot.

Every name drawn comes from the user's file and is escaped (`esc`); nothing here emits
script. Tensor labels carry ``class="tensor"`` and ``data-name`` so the page's search finds
them.
"""

from __future__ import annotations

import html
import math

from ..describe import sliced_range
from ..ir import Carried, Concat, Invariant, Last, Loop, Sliced, Value
from ..ir.static_values import const_value

ROW = 22  # pixels per port row
WIDTH = 860
LEFT = 10
CHAR = 7.3  # width of a character of the 12px monospace labels
DETAIL_CHAR = 6.1  # of the 10px details under a sliced input


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def name_of(v: Value | None) -> str:
    return "" if v is None else (v.name or f"<unnamed {v.uid}>")


def scalar_or_name(v: Value | None) -> str:
    """A one-element constant as its number, any other value by name; ``none`` for absent."""
    if v is None:
        return "none"
    data = const_value(v)
    if data is not None and data.size == 1:
        return str(data.reshape(-1)[0].item())
    return name_of(v)


def trip_count_text(v: Value | None) -> str:
    """As `scalar_or_name`; a constant that bounds nothing (OpenVINO's -1, PyTorch's
    INT64_MAX) is ``none``."""
    data = const_value(v) if v is not None else None
    if data is not None and data.size == 1 and data.dtype.kind in "iu":
        n = int(data.reshape(-1)[0])
        if n < 0 or n >= 2**63 - 1:
            return "none"
    return scalar_or_name(v)


def tensor_text(x: float, y: float, v: Value | str, label: str, anchor: str = "start",
                cls: str = "") -> str:
    """An SVG text: `label`, searchable under the tensor's name."""
    name = v if isinstance(v, str) else name_of(v)
    return (f'<text x="{x:.0f}" y="{y:.0f}" text-anchor="{anchor}" class="tensor {cls}" '
            f'data-name="{esc(name)}">{esc(label)}</text>')


def in_label(p) -> tuple[str, str]:
    """(kind, details) of an input port."""
    if isinstance(p, Sliced):
        extra = (f" part {p.part_size}" if p.part_size != 1 else "") + \
            (" keeps axis" if p.keep_axis else "")
        span = sliced_range(p)
        span = "" if span.startswith("the whole axis") else " " + span.split(" every")[0]
        rev = " reverse" if p.reverse else ""
        return "sliced", f"axis {p.axis} stride {p.stride}{extra}{span}{rev}"
    if isinstance(p, Carried):
        return "carried", f"next = {name_of(p.result)}"
    if isinstance(p, Invariant):
        return "invariant", "same every step"
    return type(p).__name__.lower(), ""


def out_label(p) -> tuple[str, str]:
    if isinstance(p, Concat):
        how = "new axis" if p.new_axis else "axis"
        extra = " reverse" if p.reverse else ""
        if p.length is not None:
            extra += f" padded to {name_of(p.length)}"
        return "concat", f"{how} {p.axis}{extra}"
    if isinstance(p, Last):
        return "last", "value after the last step"
    return type(p).__name__.lower(), ""


def captures(loop: Loop) -> list[Value]:
    """Outer values the body reads by name (at any depth) besides its ports: weights,
    sequences and states that are the same at every step, constants included."""
    ported = {p.value.uid for p in loop.input_ports if p.value is not None}
    return [v for v in loop.captured() if v.uid not in ported]


def port_map(loop: Loop) -> str:
    """The port map of `loop`: control values on top, input ports on the left (outer value ->
    body parameter), output ports on the right (body result -> outer output), the body in
    the middle, and one back edge per carried value from its result to its parameter."""
    controls = [("trip count", loop.trip_count, trip_count_text(loop.trip_count)),
                ("initial condition", loop.initial_condition,
                 scalar_or_name(loop.initial_condition)),
                ("condition result", loop.condition_result, name_of(loop.condition_result)
                 or "none"),
                ("iteration number", loop.iteration_param, name_of(loop.iteration_param)
                 or "none")]
    if loop.precondition is not None:
        controls.append(("precondition", loop.precondition, name_of(loop.precondition)))
    ins, outs = loop.input_ports, loop.output_ports
    carried = [p for p in ins if isinstance(p, Carried)]
    caps = captures(loop)
    top = 20 + ROW * len(controls) + 14
    in_y, y = [], top - 4  # a sliced input takes a second line for its axis and stride
    for p in ins:
        y += ROW
        in_y.append(y)
        y += 14 if isinstance(p, Sliced) else 0
    cap_y = [y + ROW * (i + 1) for i in range(len(caps))]
    y = cap_y[-1] if caps else y
    body_bottom = max(y, top + ROW * (len(outs) + len(carried)) - 4, top + ROW) + 10
    height = body_bottom + 16 + 10 * len(carried) + 10
    def longest(values) -> int:
        return max([len(name_of(v)) for v in values] + [0])

    # columns: outer value | kind | arrow | body (params ... results) | arrow | kind | output
    kind_x = LEFT + max(140, int(CHAR * longest([p.value for p in ins] + caps)) + 12)
    arrow_x = kind_x + 66
    body_l = arrow_x + 40 + 8 * len(carried)
    details = [in_label(p)[1] for p in ins if isinstance(p, Sliced)]
    body_l = max([body_l] + [LEFT + 16 + int(DETAIL_CHAR * len(d)) + 12 for d in details])
    body_w = max(200, int(CHAR * (longest([p.param for p in ins] + caps) + longest(
        [p.result for p in outs] + [p.result for p in carried]))) + 40)
    body_r = body_l + body_w
    tail = max([len(name_of(p.output)) + len(out_label(p)[1]) + 4 for p in outs] +
               [len(name_of(p.param)) + 8 for p in carried] + [0])
    width = max(WIDTH, body_r + 130 + int(CHAR * tail))
    parts = [f'<svg class="portmap" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
             'fill="#b4451f"/></marker></defs>']
    for i, (label, v, shown) in enumerate(controls):
        x, y = LEFT, 18 + ROW * i  # the page's script moves the values past the captions
        parts.append(f'<g class="control" data-control="{esc(label)}">')
        parts.append(f'<text x="{x}" y="{y}" class="label">{esc(label)}:</text>')
        parts.append(tensor_text(x + 140, y, v if v is not None else "", shown))
        parts.append("</g>")
    parts.append(f'<rect class="body" x="{body_l}" y="{top - 16}" width="{body_r - body_l}" '
                 f'height="{body_bottom - top + 16}" rx="6"/>')
    parts.append(f'<text x="{(body_l + body_r) // 2}" y="{top}" text-anchor="middle" '
                 f'class="label">body of {esc(loop.name or "<unnamed>")}</text>')
    param_y: dict[int, float] = {}
    for p, y in zip(ins, in_y):
        kind, detail = in_label(p)
        param_y[id(p)] = y - 4
        parts.append(f'<g class="port in {kind}" data-kind="{kind}">')
        parts.append(tensor_text(LEFT, y, p.value, f"{name_of(p.value)}"))
        parts.append(f'<text x="{kind_x}" y="{y}" class="kind {kind}">{kind}</text>')
        parts.append(f'<title>{esc(kind)}: {esc(detail)}</title>')
        parts.append(f'<line x1="{arrow_x}" y1="{y - 4}" x2="{body_l}" y2="{y - 4}" '
                     f'class="edge" marker-end="url(#arrow)"/>')
        parts.append(tensor_text(body_l + 6, y, p.param, f"{name_of(p.param)}", cls="param"))
        if detail and kind == "sliced":
            parts.append(f'<text x="{LEFT + 16}" y="{y + 13}" class="detail">{esc(detail)}'
                         "</text>")
        parts.append("</g>")
    for v, y in zip(caps, cap_y):
        parts.append('<g class="port capture" data-kind="capture">')
        parts.append(tensor_text(LEFT, y, v, name_of(v)))
        what = "constant" if v.const is not None else "captured"
        parts.append(f'<text x="{kind_x}" y="{y}" class="kind capture">{what}</text>')
        parts.append(f'<title>captured: {esc(name_of(v))} is read inside the body by name'
                     "</title>")
        parts.append(f'<line x1="{arrow_x}" y1="{y - 4}" x2="{body_l}" y2="{y - 4}" '
                     f'class="edge capture" marker-end="url(#arrow)"/>')
        parts.append(tensor_text(body_l + 6, y, v, name_of(v), cls="param capture"))
        parts.append("</g>")
    out_rows = [("port", p) for p in outs] + [("carried", p) for p in carried]
    result_y: dict[int, float] = {}
    for i, (what, p) in enumerate(out_rows):
        y = top + ROW * (i + 1) - 4
        if what == "carried":
            result_y[id(p)] = y - 4
            parts.append('<g class="port result carried" data-kind="carried-result">')
            parts.append(tensor_text(body_r - 6, y, p.result, name_of(p.result), "end"))
            parts.append(f'<text x="{body_r + 30 + 8 * len(carried)}" y="{y}" '
                         f'class="kind carried">back to {esc(name_of(p.param))}</text></g>')
            continue
        kind, detail = out_label(p)
        parts.append(f'<g class="port out {kind}" data-kind="{kind}">')
        parts.append(tensor_text(body_r - 6, y, p.result, name_of(p.result), "end"))
        parts.append(f'<line x1="{body_r}" y1="{y - 4}" x2="{body_r + 60}" y2="{y - 4}" '
                     f'class="edge" marker-end="url(#arrow)"/>')
        parts.append(f'<text x="{body_r + 64}" y="{y}" class="kind {kind}">{kind}</text>')
        parts.append(tensor_text(body_r + 118, y, p.output,
                                 f"{name_of(p.output)}  ({detail})"))
        parts.append("</g>")
    for j, p in enumerate(carried):
        yr, yp = result_y[id(p)], param_y[id(p)]
        below = body_bottom + 8 + 10 * j
        xr, xl = body_r + 4 + 0, body_l - 12 - 8 * j
        xo = body_r + 20 + 8 * j
        d = (f"M{xr},{yr} L{xo},{yr} L{xo},{below} L{xl},{below} L{xl},{yp} "
             f"L{body_l - 1},{yp}")
        parts.append(f'<path class="back-edge" data-from="{esc(name_of(p.result))}" '
                     f'data-to="{esc(name_of(p.param))}" d="{d}" marker-end="url(#arrow)">'
                     f"<title>back edge: {esc(name_of(p.result))} -&gt; "
                     f"{esc(name_of(p.param))}</title></path>")
    parts.append("</svg>")
    return "".join(parts)


SERIES = ("mean", "min", "max", "norm")
COLORS = {"mean": "#1f5fb4", "min": "#2a9d4b", "max": "#c0392b", "norm": "#7d3cb4"}


def nice_ticks(lo: float, hi: float, most: int = 8, whole: bool = False) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering [lo, hi], at most
    `most` + 1 of them, all inside the range; `whole`: at least 1 apart (step indices)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(most, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    step = max(step, 1) if whole else step
    first = math.ceil(lo / step - 1e-9) * step
    out, k = [], 0
    while first + k * step <= hi + step * 1e-9:
        out.append(round(first + k * step, 12))
        k += 1
    return out


def plot(summary: dict[str, list[float]], labels: list[str], mark: int | None = None,
         width: int = 640, height: int = 200) -> str:
    """A line plot of the per-step `summary` series (`SERIES`); `labels` name the steps (the
    x ticks and tooltips); `mark` is the step index of a first divergence (drawn as a red
    line). Ticks on both axes are round numbers; the legend sits below the plot."""
    n = len(labels)
    vals = [x for s in SERIES for x in summary[s] if math.isfinite(x)]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    if hi == lo:
        lo, hi = lo - 1.0, hi + 1.0
    pl, pr, pt, pb = 64, 16, 10, 44
    w, h = width - pl - pr, height - pt - pb

    def sx(i: float) -> float:
        return pl + (w * i / (n - 1) if n > 1 else w / 2)

    def sy(v: float) -> float:
        return pt + h * (1 - (v - lo) / (hi - lo))

    parts = [f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}">',
             f'<rect x="{pl}" y="{pt}" width="{w}" height="{h}" class="frame"/>']
    for v in nice_ticks(lo, hi, max(2, h // 28)):
        y = sy(v)
        parts.append(f'<line class="grid" x1="{pl - 3}" y1="{y:.1f}" x2="{pl + w}" '
                     f'y2="{y:.1f}"/><text x="{pl - 5}" y="{y + 3.5:.1f}" text-anchor="end" '
                     f'class="tick y">{v:.4g}</text>')
    longest = max([len(t) for t in labels] + [1])
    most = max(1, min(10, int(w // (6.5 * longest + 14))))
    xs = [int(i) for i in nice_ticks(0, n - 1, most, whole=True)] if n > 1 else [0] * bool(n)
    for i in xs:
        x = sx(i)
        parts.append(f'<line class="grid" x1="{x:.1f}" y1="{pt + h}" x2="{x:.1f}" '
                     f'y2="{pt + h + 3}"/><text x="{x:.1f}" y="{pt + h + 14}" '
                     f'text-anchor="middle" class="tick x">{esc(labels[i])}</text>')
    for s in SERIES:
        segments, cur = [], []
        for i, v in enumerate(summary[s]):
            if math.isfinite(v):
                cur.append(f"{sx(i):.1f},{sy(v):.1f}")
            elif cur:
                segments.append(cur)
                cur = []
        if cur:
            segments.append(cur)
        for seg in segments:
            if len(seg) == 1:
                x, y = seg[0].split(",")
                parts.append(f'<circle class="series {s}" data-series="{s}" cx="{x}" cy="{y}" '
                             f'r="2" fill="{COLORS[s]}"/>')
            else:
                parts.append(f'<polyline class="series {s}" data-series="{s}" fill="none" '
                             f'stroke="{COLORS[s]}" points="{" ".join(seg)}"/>')
    if mark is not None and 0 <= mark < n:
        x = sx(mark)
        parts.append(f'<line class="divergence" x1="{x:.1f}" y1="{pt}" x2="{x:.1f}" '
                     f'y2="{pt + h}"><title>first divergence at step {esc(labels[mark])}'
                     "</title></line>")
    ly = height - 8
    for k, s in enumerate(SERIES):
        x = pl + 70 * k
        parts.append(f'<line x1="{x}" y1="{ly - 4}" x2="{x + 16}" y2="{ly - 4}" '
                     f'stroke="{COLORS[s]}" stroke-width="2"/><text x="{x + 20}" y="{ly}" '
                     f'fill="{COLORS[s]}" class="legend">{s}</text>')
    parts.append("</svg>")
    return "".join(parts)
