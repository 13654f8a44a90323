"""In-page layout for the loop page: bodies drawn as graphs by dagre, labels placed by size.

`body_graph` emits an empty ``<svg class="bodygraph">`` holding the body's nodes and edges
as JSON. At load the page's script (``static/view_layout.js``) measures every label with
``getBBox``, lays the body out with the bundled dagre library (``static/dagre.min.js``, MIT
licence) and draws the nodes and the edge paths. The same script places each port map's
control values after their measured captions and grows every SVG's viewBox to hold all it
draws, so no text is cut. With ``?check=1`` it also writes every pair of overlapping text
boxes and every box outside its SVG into ``<pre id="layout-check">`` (the tests read it with
Chromium's ``--dump-dom``).
"""

from __future__ import annotations

import json
from importlib import resources

from ..ir import Graph, Loop
from .view_svg import esc, name_of


def _static(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text("utf-8")


def dagre_js() -> str:
    """The bundled dagre library (minified), inlined into the page."""
    return _static("dagre.min.js")


def body_graph(g: Graph) -> str:
    """An SVG that the page's script fills with `g`'s nodes (op and name) and data edges;
    values from outside the body (parameters, captures) are drawn as ellipses."""
    nodes, edges, ids = [], [], {}
    defined = {v.uid for n in g.nodes for v in n.outputs}
    for i, n in enumerate(g.nodes):
        nid = f"n{i}"
        kind = "loop" if isinstance(n, Loop) else ("sub" if n.subgraphs() else "op")
        nodes.append({"id": nid, "op": n.op_type, "name": n.name or "", "kind": kind})
        for v in n.outputs:
            ids[v.uid] = nid
    for i, n in enumerate(g.nodes):
        for v in n.reads():
            src = ids.get(v.uid)
            if src is None and v.uid not in defined:
                if v.const is not None and v not in n.inputs:
                    continue
                src = f"v{v.uid}"
                if src not in ids.values():
                    ids[v.uid] = src
                    nodes.append({"id": src, "op": "", "name": name_of(v), "kind": "value"})
            edges.append({"from": src, "to": f"n{i}", "name": name_of(v)})
    for v in g.outputs:
        if v is not None and v.uid in ids:
            nid = f"o{v.uid}"
            nodes.append({"id": nid, "op": "", "name": name_of(v), "kind": "result"})
            edges.append({"from": ids[v.uid], "to": nid, "name": name_of(v)})
    data = esc(json.dumps({"nodes": nodes, "edges": edges}))
    return (f'<svg class="bodygraph" xmlns="http://www.w3.org/2000/svg" width="10" height="10"'
            f' data-graph="{data}" role="img"></svg>')


def layout_js() -> str:
    """The page's layout script (``static/view_layout.js``)."""
    return _static("view_layout.js")


__all__ = ["body_graph", "dagre_js", "layout_js"]
