"""Nested-loop models for the inspect tests, each with a plain Python loop computing the
same per-step quantities (the oracle)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset13 as op
from onnx import helper as h

import onnx_builders as ob

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


def ragged_loops(n: int = 4):
    """Loop 'outer' runs n steps carrying s; at step i its body runs Loop 'inner' i times
    carrying t: ``t = t + 1``, then ``s = s + t``: the inner loop's step count varies."""
    inner = ob.body([h.make_node("Add", ["t", "one"], ["t_next"]),
                     h.make_node("Identity", ["ci"], ["co"])],
                    [ob.vi("j", I64, []), ob.vi("ci", B, []), ob.vi("t", F, [])],
                    [ob.vi("co", B, []), ob.vi("t_next", F, [])],
                    [ob.const("one", np.float32(1))], name="inner_body")
    outer = ob.body([h.make_node("Loop", ["i", "", "zero"], ["t_fin"], body=inner, name="inner"),
                     h.make_node("Add", ["s", "t_fin"], ["s_next"]),
                     h.make_node("Identity", ["c"], ["c_out"])],
                    [ob.vi("i", I64, []), ob.vi("c", B, []), ob.vi("s", F, [])],
                    [ob.vi("c_out", B, []), ob.vi("s_next", F, [])],
                    [ob.const("zero", np.float32(0))], name="outer_body")
    m = ob.model([h.make_node("Loop", ["N", "", "s0"], ["sT"], body=outer, name="outer")],
                 [ob.vi("N", I64, []), ob.vi("s0", F, [])], [ob.vi("sT", F, [])])

    def oracle(s0):
        t_rows, t_steps, s_rows = [], [], []
        s = np.float32(s0)
        for i in range(n):
            t = np.float32(0)
            for j in range(i):
                t = np.float32(t + 1)
                t_rows.append(t)
                t_steps.append((i, j))
            s = np.float32(s + t)
            s_rows.append(s)
        return {"outer/inner/t_next": (np.array(t_rows, np.float32),
                                       np.array(t_steps, np.int64).reshape(-1, 2)),
                "outer/s_next": (np.array(s_rows, np.float32),
                                 np.arange(n, dtype=np.int64).reshape(-1, 1))}

    return m, {"N": np.int64(n), "s0": np.float32(0.5)}, oracle


def ti_inside_loop(path, trip: int = 3):
    """An OpenVINO IR file: Loop 'outer' (trip count `trip`, current_iteration k) carrying
    h [1, 4]; its body runs TensorIterator 'inner' over the rows of X [5, 4] carrying g:
    ``g = g * 0.5 + x_row * (k + 1)``; then ``h = h + g``."""
    X = op.parameter([5, 4], np.float32, name="X")
    h0 = op.parameter([1, 4], np.float32, name="h0")
    # inner body
    xi = op.parameter([1, 4], np.float32, name="xi")
    g = op.parameter([1, 4], np.float32, name="g")
    kf = op.parameter([], np.float32, name="kf")
    g_next = op.add(op.multiply(g, np.float32(0.5)), op.multiply(xi, kf), name="g_next")
    rg = op.result(g_next)
    ti = op.tensor_iterator()
    ti.set_body(ov.Model([rg], [xi, g, kf], "inner_body"))
    # outer body
    k = op.parameter([], np.int64, name="k")
    hp = op.parameter([1, 4], np.float32, name="h")
    Xb = op.parameter([5, 4], np.float32, name="Xb")
    k1 = op.add(op.convert(k, np.float32), np.float32(1), name="k1")
    ti.set_sliced_input(xi, Xb.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(g, op.constant(np.zeros((1, 4), np.float32)).output(0), rg.output(0))
    ti.set_invariant_input(kf, k1.output(0))
    ti.set_friendly_name("inner")
    g_fin = ti.get_iter_value(rg.output(0), -1)
    h_next = op.add(hp, g_fin, name="h_next")
    rh = op.result(h_next)
    rc = op.result(op.constant(np.array(True)))
    loop = op.loop(op.constant(np.int64(trip)), op.constant(np.array(True)))
    loop.set_function(ov.Model([rc, rh], [k, hp, Xb], "outer_body"))
    loop.set_special_body_ports([0, 0])
    loop.set_merged_input(hp, h0.output(0), rh.output(0))
    loop.set_invariant_input(Xb, X.output(0))
    loop.set_friendly_name("outer")
    out = loop.get_iter_value(rh.output(0), -1)
    ov.save_model(ov.Model([op.result(out)], [X, h0], "ti_in_loop"), str(path),
                  compress_to_fp16=False)

    def oracle(X, h0):
        rows = {"outer/inner/g_next": [], "outer/h_next": []}
        steps = {k_: [] for k_ in rows}
        hh = h0.copy()
        for kk in range(trip):
            gg = np.zeros((1, 4), np.float32)
            for j, x in enumerate(X):
                gg = gg * np.float32(0.5) + x[None] * np.float32(kk + 1)
                rows["outer/inner/g_next"].append(gg)
                steps["outer/inner/g_next"].append((kk, j))
            hh = hh + gg
            rows["outer/h_next"].append(hh)
            steps["outer/h_next"].append((kk,))
        return {k_: (np.array(rows[k_]), np.array(steps[k_], np.int64)) for k_ in rows}

    return oracle
