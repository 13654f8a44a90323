"""passes.cells.fission: cells stacked in one loop (Keras ``RNN([cell, cell])``, a PyTorch loop
calling two cells per step) are split into one loop per cell and each fused; the results
match ONNX Runtime on the original loop on both backends. Loops whose cells feed each other
both ways, or whose upper cell reads the lower one's previous state, stay one loop."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper
from onnx import helper as h

import itergraph as ig
from itergraph.passes.cells import fuse_cells, fused_kind
from onnx_builders import run_ort
from passutil import load, loops, run, transformed

F = TensorProto.FLOAT


class _Body:
    """Nodes and initializers of a Scan body, cells written as tf2onnx writes Keras cells."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: dict[str, np.ndarray] = {}

    def op(self, kind, ins, out, **attrs):
        self.nodes.append(h.make_node(kind, ins, [out], **attrs))
        return out

    def weight(self, name, shape, scale):
        self.inits[name] = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        return name

    def lstm(self, p, x, hp, cp, n_in, H):
        """Keras order i, f, c, o; returns (h', c')."""
        z = self.op("Add", [self.op("MatMul", [x, self.weight(f"{p}W", (n_in, 4 * H), 0.5)],
                                    f"{p}xw"),
                            self.op("MatMul", [hp, self.weight(f"{p}R", (H, 4 * H), 0.4)],
                                    f"{p}hr")], f"{p}z")
        z = self.op("Add", [z, self.weight(f"{p}b", (4 * H,), 0.2)], f"{p}zb")
        self.nodes.append(h.make_node("Split", [z], [f"{p}{g}" for g in "ifco"], axis=1,
                                      num_outputs=4))
        i, f, o = (self.op("Sigmoid", [f"{p}{g}"], f"{p}s{g}") for g in "ifo")
        g = self.op("Tanh", [f"{p}c"], f"{p}tc")
        c = self.op("Add", [self.op("Mul", [f, cp], f"{p}fc"), self.op("Mul", [i, g], f"{p}ig")],
                    f"{p}c_new")
        return self.op("Mul", [o, self.op("Tanh", [c], f"{p}th")], f"{p}h_new"), c

    def rnn(self, p, x, hp, n_in, H):
        z = self.op("Add", [self.op("MatMul", [x, self.weight(f"{p}W", (n_in, H), 0.5)],
                                    f"{p}xw"),
                            self.op("MatMul", [hp, self.weight(f"{p}R", (H, H), 0.4)],
                                    f"{p}hr")], f"{p}z")
        return self.op("Tanh", [self.op("Add", [z, self.weight(f"{p}b", (H,), 0.2)],
                                        f"{p}zb")], f"{p}h_new")


def _stacked(cells, B=3, T=5, I=4, H=6, seed=0, skip_previous=False, feedback=False):
    """A Scan over X running `cells` ("lstm"/"rnn") stacked, each reading the one below's new
    hidden state; scan output: the top cell's h. `skip_previous`: the second cell also reads
    the first cell's previous h; `feedback`: the first cell also reads the top cell's h."""
    b = _Body(seed)
    states, results, x, n_in = [], [], "x_t", I
    for k, cell in enumerate(cells):
        p = f"l{k}_"
        hp = f"{p}h_in"
        states.append(hp)
        if k == 0 and feedback:
            x = b.op("Add", [b.op("MatMul", [f"l{len(cells) - 1}_h_in",
                                             b.weight("FB", (H, I), 0.3)], "fb"), x], "x_fb")
        if k == 1 and skip_previous:
            x = b.op("Add", [x, "l0_h_in"], "x_skip")
        if cell == "lstm":
            states.append(f"{p}c_in")
            hn, cn = b.lstm(p, x, hp, f"{p}c_in", n_in, H)
            results += [hn, cn]
        else:
            hn = b.rnn(p, x, hp, n_in, H)
            results.append(hn)
        x, n_in = hn, H
    b.nodes.append(h.make_node("Identity", [x], ["y_t"]))
    vi = [h.make_tensor_value_info(s, F, ["B", H]) for s in states]
    body = h.make_graph(b.nodes, "body", [*vi, h.make_tensor_value_info("x_t", F, ["B", I])],
                        [h.make_tensor_value_info(r, F, ["B", H]) for r in results]
                        + [h.make_tensor_value_info("y_t", F, ["B", H])])
    inits = [f"S{k}" for k in range(len(states))]
    finals = [f"F{k}" for k in range(len(states))]
    scan = h.make_node("Scan", [*inits, "X"], [*finals, "Y"], body=body, num_scan_inputs=1)
    g = h.make_graph([scan], "stacked",
                     [h.make_tensor_value_info("X", F, [T, B, I])]
                     + [h.make_tensor_value_info(s, F, [B, H]) for s in inits],
                     [h.make_tensor_value_info(f, F, [B, H]) for f in finals]
                     + [h.make_tensor_value_info("Y", F, [T, B, H])],
                     [numpy_helper.from_array(v, k) for k, v in b.inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    rng = np.random.default_rng(seed + 1)
    feeds = {"X": rng.standard_normal((T, B, I)).astype(np.float32)}
    feeds.update({s: (rng.standard_normal((B, H)) * 0.5).astype(np.float32) for s in inits})
    return m, feeds


def _close(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("cells", [("lstm", "rnn"), ("rnn", "lstm"), ("lstm", "lstm", "rnn")])
def test_stacked_cells_are_split_and_fused(cells):
    m, feeds = _stacked(cells)
    want = run_ort(m, feeds)
    model = ig.load(m)
    scan = loops(model.graph)[0]
    assert fused_kind(model.graph, scan) == "+".join(c.upper() for c in cells)
    g, count = transformed(load(m), fuse_cells)
    assert count == len(cells) and not loops(g)
    assert [n.op_type for n in g.nodes].count("RecurrentSequence") == len(cells)
    _close(run(g, feeds), want)
    _close(model.run(feeds), want)
    _close(model.run(feeds, backend="jax"), want)


@pytest.mark.parametrize("how", ["skip_previous", "feedback"])
def test_cells_that_read_each_others_previous_state_stay_one_loop(how):
    m, feeds = _stacked(("lstm", "rnn"), **{how: True})
    want = run_ort(m, feeds)
    g, count = transformed(load(m), fuse_cells)
    assert count == 0 and len(loops(g)) == 1
    _close(ig.load(m).run(feeds), want)
    _close(ig.load(m).run(feeds, backend="jax"), want)
