"""Nested-loop models for the inspect tests, each with a plain Python loop computing the
same per-step quantities (the oracle)."""

from __future__ import annotations

import numpy as np
from onnx import helper as h

from tests_path import ob  # noqa: F401  (puts tests/ on the path)

F, I64, B = ob.F, ob.I64, ob.B


def scan_with_inner_loop(inner_trip: int = 2):
    """Scan 'outer_scan' over X [T, 3], carrying h [3]; its body runs Loop 'inner_loop'
    `inner_trip` times carrying g: ``g = g * 0.5 + x_t``; then ``h = h + tanh(g)``.
    The inner body computes gh = g * 0.5."""
    inner = ob.body(
        [h.make_node("Mul", ["g", "half"], ["gh"]),
         h.make_node("Add", ["gh", "x_t"], ["g_next"]),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        [ob.vi("it", I64, []), ob.vi("c_in", B, []), ob.vi("g", F, [3])],
        [ob.vi("c_out", B, []), ob.vi("g_next", F, [3])],
        [ob.const("half", np.float32(0.5))], name="inner_body")
    outer = ob.body(
        [h.make_node("Loop", ["trip", "", "x_t"], ["g_fin"], body=inner, name="inner_loop"),
         h.make_node("Tanh", ["g_fin"], ["t"]),
         h.make_node("Add", ["h", "t"], ["h_next"])],
        [ob.vi("h", F, [3]), ob.vi("x_t", F, [3])],
        [ob.vi("h_next", F, [3])],
        [ob.const("trip", np.int64(inner_trip))], name="outer_body")
    m = ob.model([h.make_node("Scan", ["h0", "X"], ["hT"], body=outer, num_scan_inputs=1,
                              name="outer_scan")],
                 [ob.vi("h0", F, [3]), ob.vi("X", F, ["T", 3])], [ob.vi("hT", F, [3])])

    def oracle(h0, X):
        """{qualified name: (values, steps)} for g_next, h (inner), h_next."""
        rows = {"outer_scan/inner_loop/g_next": [], "outer_scan/inner_loop/gh": [],
                "outer_scan/h_next": []}
        steps = {k: [] for k in rows}
        hh = h0.copy()
        for i, x in enumerate(X):
            g = x.copy()
            for j in range(inner_trip):
                hi = (g * np.float32(0.5)).astype(np.float32)
                g = hi + x
                for k, v in (("outer_scan/inner_loop/g_next", g), ("outer_scan/inner_loop/gh", hi)):
                    rows[k].append(v)
                    steps[k].append((i, j))
            hh = hh + np.tanh(g)
            rows["outer_scan/h_next"].append(hh)
            steps["outer_scan/h_next"].append((i,))
        return {k: (np.array(rows[k]), np.array(steps[k], np.int64)) for k in rows}

    return m, oracle
