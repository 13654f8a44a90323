"""Models with nested loops for the view, progress and profile tests, with plain-Python
oracles of what they compute and how often each body node runs."""

from __future__ import annotations

import numpy as np
from onnx import helper as h

from onnx_builders import I64, B, F, body, const, model, vi


def nested(name_prefix: str = "") -> onnx.ModelProto:  # noqa: F821
    """outer: N steps, carried h [2]; its body runs an If and the loop 'inner' (M steps,
    carried g, from h); then h' = g + 1 and a scan output of h'. A second top-level loop
    'scan' adds w to h N times. Inner node 'inner_tanh' runs N*M times, 'outer_add' N times."""
    p = name_prefix
    inner_body = body(
        [h.make_node("Add", ["g", "w"], ["gw"], name=f"{p}inner_add"),
         h.make_node("Tanh", ["gw"], ["g_out"], name=f"{p}inner_tanh"),
         h.make_node("Identity", ["ic"], ["ic_out"], name=f"{p}inner_cond")],
        [vi("j", I64, []), vi("ic", B, []), vi("g", F, [2])],
        [vi("ic_out", B, []), vi("g_out", F, [2])], name="inner_body")
    then_b = body([h.make_node("Neg", ["h"], ["t"], name=f"{p}then_neg")], [], [vi("t", F, [2])],
                  name="then")
    else_b = body([h.make_node("Abs", ["h"], ["e"], name=f"{p}else_abs")], [], [vi("e", F, [2])],
                  name="else")
    outer_body = body(
        [h.make_node("Less", ["i", "two"], ["early"], name=f"{p}outer_less"),
         h.make_node("If", ["early"], ["hs"], then_branch=then_b, else_branch=else_b,
                     name=f"{p}choose"),
         h.make_node("Loop", ["M", "", "hs"], ["g_last"], body=inner_body, name=f"{p}inner"),
         h.make_node("Add", ["g_last", "one"], ["h_out"], name=f"{p}outer_add"),
         h.make_node("Identity", ["c"], ["c_out"], name=f"{p}outer_cond")],
        [vi("i", I64, []), vi("c", B, []), vi("h", F, [2])],
        [vi("c_out", B, []), vi("h_out", F, [2]), vi("h_out", F, [2])],
        [const("two", 2, np.int64), const("one", np.ones(2, np.float32))], name="outer_body")
    # 'scan' adds the outer value w (an invariant capture) to its carried sum N times.
    scan_body = body(
        [h.make_node("Add", ["acc", "w"], ["acc_out"], name=f"{p}scan_add"),
         h.make_node("Identity", ["sc"], ["sc_out"], name=f"{p}scan_cond")],
        [vi("k", I64, []), vi("sc", B, []), vi("acc", F, [2])],
        [vi("sc_out", B, []), vi("acc_out", F, [2])], name="scan_body")
    nodes = [h.make_node("Loop", ["N", "", "h0"], ["h", "hist"], body=outer_body,
                         name=f"{p}outer"),
             h.make_node("Loop", ["N", "", "h"], ["total"], body=scan_body, name=f"{p}scan")]
    return model(nodes, [vi("N", I64, []), vi("M", I64, []), vi("h0", F, [2]),
                         vi("w", F, [2])],
                 [vi("h", F, [2]), vi("hist", F, ["n", 2]), vi("total", F, [2])])


def nested_feeds(n: int, m: int) -> dict:
    return {"N": np.array(n, np.int64), "M": np.array(m, np.int64),
            "h0": np.array([0.5, -1.5], np.float32), "w": np.array([0.25, -0.75], np.float32)}


def nested_oracle(feeds: dict) -> dict:
    """The plain Python loops of `nested`."""
    n, m = int(feeds["N"]), int(feeds["M"])
    h_, w = feeds["h0"].astype(np.float32), feeds["w"]
    hist = []
    for i in range(n):
        g = -h_ if i < 2 else np.abs(h_)
        for _ in range(m):
            g = np.tanh(g + w)
        h_ = (g + 1).astype(np.float32)
        hist.append(h_)
    total = h_.copy()
    for _ in range(n):
        total = total + w
    return {"h": h_, "hist": np.array(hist).reshape(n, 2), "total": total}


def counting_while(limit: int) -> onnx.ModelProto:  # noqa: F821
    """A top-level loop stopped by its condition (i + 1 < limit) with a scan output: the
    JAX backend drives it in buffer segments. Runs `limit` steps."""
    b = body([h.make_node("Add", ["i", "one"], ["i1"], name="next"),
              h.make_node("Less", ["i1", "lim"], ["go"], name="test"),
              h.make_node("Cast", ["i", ], ["fi"], to=1, name="as_float"),
              h.make_node("Add", ["s", "fi"], ["s_out"], name="acc")],
             [vi("i", I64, []), vi("c", B, []), vi("s", F, [])],
             [vi("go", B, []), vi("s_out", F, []), vi("fi", F, [])],
             [const("one", 1, np.int64)], name="while_body")
    return model([h.make_node("Loop", ["", "c0", "s0"], ["s", "seq"], body=b, name="counter")],
                 [vi("c0", B, []), vi("s0", F, []), vi("lim", I64, [])],
                 [vi("s", F, []), vi("seq", F, ["n"])])
