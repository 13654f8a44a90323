"""``itergraph view``: one self-contained HTML page showing a model's loops.

The page holds the tree of loops and Ifs at any depth as nested ``<details>`` (bodies open in
place), each loop's port map drawn in SVG (`view_svg.port_map`: sliced inputs with axis,
stride and part size, carried values with their back edges, invariant inputs, captures, last
and concatenated outputs, trip count and conditions), each body drawn as a graph laid out in
the page by the bundled dagre library (`view_layout`), with its nodes also as a text list,
a search box that highlights the tensors whose name contains the query and opens the bodies
that hold them, and, given a trace file
(`view_trace`), a plot per traced tensor of its mean, min, max and norm at every step, with
the first divergence marked when the trace records one. CSS, script and pictures are
inline: the page needs no network. Every name from the model or the trace is escaped.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..ir import Graph, Loop, Node, Value
from .view_layout import body_graph, dagre_js, layout_js
from .view_svg import esc, name_of, plot, port_map, trip_count_text
from .view_trace import Trace, read_trace

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}
h1{font-size:1.3em} h2{font-size:1.1em;margin-top:1.5em}
details{margin:.3em 0 .3em 1.2em;border-left:2px solid #ccd;padding-left:.6em}
details.loop>summary{font-weight:600;color:#1b3f8b}
details.if>summary{font-weight:600;color:#6b3d00}
details.diverged>summary{background:#fde2e2}
summary{cursor:pointer}
.node-row{font-family:ui-monospace,monospace;font-size:12.5px;margin:1px 0}
.node-row.dim,.io.dim{opacity:.35}
.op{color:#555;font-weight:600}
.tensor{color:#0b5d1e}
span.tensor{padding:0 2px;border-radius:3px}
.hit{background:#ffe25c;outline:1px solid #d4a800}
text.hit{fill:#b00000;font-weight:700}
#searchbar{position:sticky;top:0;background:#fff;padding:.4em 0;z-index:2;
 border-bottom:1px solid #ddd}
#search{width:24em;font-size:14px;padding:2px 4px}
svg text{font:12px ui-monospace,monospace}
svg .label{fill:#444} svg .kind{fill:#555;font-style:italic} svg .detail{font-size:10px;fill:#777}
svg rect.body{fill:#f3f6ff;stroke:#8ca0d8}
svg .edge{stroke:#888;stroke-width:1}
svg .back-edge{fill:none;stroke:#b4451f;stroke-width:1.6}
svg .frame{fill:#fafafa;stroke:#bbb}
svg .series{stroke-width:1.4}
svg .divergence{stroke:#e00;stroke-width:2;stroke-dasharray:4 2}
svg .tick{font-size:10px;fill:#666} svg .grid{stroke:#e4e4e4}
svg.bodygraph{display:block;margin:.4em 0}
svg.bodygraph .shape{fill:#fff;stroke:#7a8bb8}
svg.bodygraph .loop .shape{fill:#eef2ff;stroke:#1b3f8b;stroke-width:1.5}
svg.bodygraph .sub .shape{fill:#fff6e8;stroke:#6b3d00}
svg.bodygraph .value .shape{fill:#eef8ee;stroke:#5a9a5a}
svg.bodygraph .result .shape{fill:#f8f0e8;stroke:#b4451f}
svg.bodygraph .gedge{fill:none;stroke:#888;stroke-width:1}
svg .op{font-weight:700;fill:#333} svg .nname{fill:#555;font-size:11px}
svg .capture{fill:#0b5d1e}
.banner{background:#fde2e2;border:1px solid #e88;padding:.5em;margin:.5em 0}
.trace{margin:.6em 0 1em}
.trace h3{font-size:1em;margin:.2em 0}
"""

SCRIPT = """
(function(){
  var box=document.getElementById('search'), out=document.getElementById('hits');
  function run(){
    var q=box.value.trim().toLowerCase(), n=0;
    document.querySelectorAll('.tensor').forEach(function(e){
      var hit=q!=='' && (e.getAttribute('data-name')||'').toLowerCase().indexOf(q)>=0;
      e.classList.toggle('hit',hit);
      if(hit){n++;for(var p=e.parentNode;p;p=p.parentNode){if(p.tagName==='DETAILS')p.open=true;}}
    });
    document.querySelectorAll('.node-row,.io').forEach(function(r){
      r.classList.toggle('dim', q!=='' && !r.querySelector('.hit'));
    });
    out.textContent = q==='' ? '' : n+' match'+(n===1?'':'es');
    out.setAttribute('data-count', String(n));
  }
  box.addEventListener('input',run);
  document.getElementById('expand').addEventListener('click',function(){
    document.querySelectorAll('details').forEach(function(d){d.open=true;});});
  document.getElementById('collapse').addEventListener('click',function(){
    document.querySelectorAll('details').forEach(function(d){d.open=false;});});
  var q=new URLSearchParams(location.search).get('q'); if(q){box.value=q;run();}
})();
"""


def tensor(v: Value | None) -> str:
    if v is None:
        return '<span class="none">-</span>'
    n = name_of(v)
    return f'<span class="tensor" data-name="{esc(n)}">{esc(n)}</span>'


class _Page:
    def __init__(self, graph: Graph, trace: Trace | None):
        self.graph = graph
        self.trace = trace
        self.ids = 0
        self.div_loop = None
        if trace is not None and trace.divergence:
            d = trace.divergence
            entry = next((e for e in trace.entries if e.key == d.get("entry")), None)
            self.div_loop = "/".join(entry.loops) if entry and entry.loops else d.get("loop")

    def _id(self) -> int:
        self.ids += 1
        return self.ids

    def node_row(self, n: Node) -> str:
        ins = ", ".join(tensor(v) for v in n.inputs)
        outs = ", ".join(tensor(v) for v in n.outputs)
        return (f'<div class="node-row" data-op="{esc(n.op_type)}"><span class="op">'
                f'{esc(n.op_type)}</span> <span class="nname">{esc(n.name)}</span>: {ins} '
                f"&rarr; {outs}</div>")

    def graph_body(self, g: Graph, path: tuple[str, ...]) -> str:
        """The loops and Ifs of `g` in place; its other nodes after them as one collapsed
        list (a model's hundreds of plain nodes do not bury its loops)."""
        parts, rows, ops = [], [], {}
        for n in g.nodes:
            if isinstance(n, Loop):
                parts.append(self.loop(n, path))
            elif n.subgraphs():
                parts.append(self.branches(n, path))
            else:
                rows.append(self.node_row(n))
                ops[n.op_type] = ops.get(n.op_type, 0) + 1
        if not parts and g is not self.graph:  # a branch's own nodes, in place
            return "".join(rows)
        if rows:
            common = sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))
            what = ", ".join(f"{op} x{k}" for op, k in common[:6]) + \
                (", ..." if len(common) > 6 else "")
            parts.append(f'<details class="nodelist"><summary>{len(rows)} other node'
                         f'{"s" if len(rows) != 1 else ""} ({esc(what)})</summary>'
                         f'{"".join(rows)}</details>')
        return "".join(parts)

    def branches(self, n: Node, path: tuple[str, ...]) -> str:
        names = [k for k, a in n.attrs.items() if isinstance(a, Graph)]
        subs = n.subgraphs()
        labels = names if len(names) == len(subs) else [f"graph {i}" for i in range(len(subs))]
        inner = "".join(
            f'<details class="branch" data-branch="{esc(lab)}"><summary>{esc(lab)}</summary>'
            f'{self.outputs_row(g)}{self.graph_body(g, path)}</details>'
            for lab, g in zip(labels, subs))
        cls = "if" if n.op_type == "If" else "subgraph"
        return (f'<details class="{cls}" id="node-{self._id()}" data-name="{esc(n.name)}">'
                f'<summary>{esc(n.op_type)} {esc(n.name)}: condition '
                f'{", ".join(tensor(v) for v in n.inputs)} &rarr; '
                f'{", ".join(tensor(v) for v in n.outputs)}</summary>{inner}</details>')

    def outputs_row(self, g: Graph) -> str:
        return (f'<div class="io">outputs: {", ".join(tensor(v) for v in g.outputs)}</div>'
                if g.outputs else "")

    def loop(self, loop: Loop, path: tuple[str, ...]) -> str:
        name = loop.name or "<unnamed>"
        here = (*path, name)
        qual = "/".join(here)
        cls = "loop diverged" if self.div_loop == qual else "loop"
        opened = " open" if not path else ""
        summary = (f"Loop {esc(name)} <small>({esc(loop.origin or 'itergraph')}; trip count "
                   f"{esc(trip_count_text(loop.trip_count))}; {len(loop.input_ports)} in, "
                   f"{len(loop.output_ports)} out)</small>")
        body = loop.body.nodes  # nested loops and Ifs stay in view; the rest as a list
        nested = "".join(self.graph_body(Graph(nodes=[n]), here) for n in body if n.subgraphs())
        rows = "".join(self.node_row(n) for n in body if not n.subgraphs())
        links = ""
        if self.trace is not None:
            mine = [e for e in self.trace.entries if "/".join(e.loops) == qual]
            if mine:
                links = '<div class="io">traced: ' + ", ".join(
                    f'<a href="#trace-{esc(e.key)}">{esc(e.tensor)}</a>' for e in mine) + "</div>"
        return (f'<details class="{cls}" id="loop-{self._id()}" data-path="{esc(qual)}"'
                f'{opened}><summary>{summary}</summary>{port_map(loop)}{links}'
                f'{body_graph(loop.body)}{nested}<details class="nodelist"><summary>nodes as'
                f' a list</summary><div class="bodynodes">{rows}</div></details></details>')

    def traces(self) -> str:
        t = self.trace
        if t is None:
            return ""
        parts = [f'<h2 id="traces">Trace ({esc(t.backend or "?")}, model {esc(t.model)})</h2>']
        if t.divergence:
            d = t.divergence
            engines = " vs ".join(str(x) for x in d.get("engines", []))
            parts.append(
                f'<div class="banner" id="divergence">First divergence: loop '
                f'<b>{esc(d.get("loop", "?"))}</b>, step <b>{esc(d.get("step", "?"))}</b>, '
                f'tensor <a href="#trace-{esc(d.get("entry", ""))}">'
                f'<b>{esc(d.get("entry", "?"))}</b></a> ({esc(engines)})</div>')
        for e in t.entries:
            n = len(e.steps)
            div = ' data-divergence="1"' if e.mark is not None else ""
            parts.append(
                f'<div class="trace" id="trace-{esc(e.key)}" data-entry="{esc(e.key)}"{div}>'
                f'<h3><span class="tensor" data-name="{esc(e.key)}">{esc(e.key)}</span> '
                f'<small>({esc(e.kind)}; {n} steps; shape {esc(e.shape)} {esc(e.dtype)})'
                f"</small></h3>"
                + (plot(e.summary, e.labels, e.mark) if n else "<p>no steps</p>") + "</div>")
        return "".join(parts)

    def render(self, title: str) -> str:
        g = self.graph
        ins = ", ".join(tensor(v) for v in g.inputs if v.const is None)
        outs = ", ".join(tensor(v) for v in g.outputs)
        tree = self.graph_body(g, ())
        n_loops = sum(1 for _, n in g.walk() if isinstance(n, Loop))
        n_ifs = sum(1 for _, n in g.walk() if n.op_type == "If")
        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}: loops</title><style>{CSS}</style></head><body>"
            f"<h1>{esc(title)}</h1>"
            '<div id="searchbar"><input id="search" type="search" '
            'placeholder="search tensors by name" aria-label="search tensors"> '
            '<span id="hits"></span> <button id="expand" type="button">expand all</button> '
            '<button id="collapse" type="button">collapse all</button></div>'
            f'<div class="io">inputs: {ins}</div><div class="io">outputs: {outs}</div>'
            f'<h2>Loops and branches ({n_loops} loop{"s" if n_loops != 1 else ""}, {n_ifs} '
            f'If{"s" if n_ifs != 1 else ""})</h2><div id="tree">{tree}</div>'
            f"{self.traces()}<script>{dagre_js()}\n{layout_js()}\n{SCRIPT}</script>"
            "</body></html>\n")


def render(model, trace: str | os.PathLike | None = None) -> str:
    """The page for `model` (anything `itergraph.load` takes), with `trace` when given."""
    from ..model import load

    m = load(model)
    t = read_trace(str(trace)) if trace is not None else None
    if t is not None:
        _check_trace_fits(t, m, str(trace))
    from_file = Path(m.source).suffix.lower() in (".onnx", ".xml", ".pb")
    title = Path(m.source).name if from_file else (m.graph.name or "model")
    return _Page(m.graph, t).render(title)


def _loop_paths(g: Graph, path: tuple[str, ...] = ()) -> set[str]:
    """The loops' paths as the page names them (loop names, outermost first; Ifs skipped)."""
    out: set[str] = set()
    for n in g.nodes:
        if isinstance(n, Loop):
            here = (*path, n.name or "<unnamed>")
            out.add("/".join(here))
            out |= _loop_paths(n.body, here)
        else:
            for sub in n.subgraphs():
                out |= _loop_paths(sub, path)
    return out


def _check_trace_fits(t: Trace, m, file: str) -> None:
    """A trace recorded on another model (none of its loops is one of this model's, and the
    file names differ) is refused rather than plotted beside the wrong loops."""
    if not t.entries or Path(t.model or "").name == Path(m.source or "").name:
        return
    mine = _loop_paths(m.graph)
    if any("/".join(e.loops) in mine for e in t.entries):
        return
    theirs = sorted({"/".join(e.loops) for e in t.entries})
    raise InputError(f"trace '{file}' was recorded on '{t.model}': none of its loops "
                     f"({', '.join(theirs[:5])}) is a loop of this model "
                     f"({', '.join(sorted(mine)[:5]) or 'none'})")


def write(model, out: str | os.PathLike, trace: str | os.PathLike | None = None) -> Path:
    """Write the page for `model` to `out`; returns the path."""
    text = render(model, trace)
    out = Path(out)
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot write '{out}': {e.strerror or e}") from None
    return out


__all__ = ["render", "write"]
