"""Benchmark workloads: loop-heavy ONNX models built with `onnx.helper`, plus NumPy oracles.

Each workload is one builder function returning ``(ModelProto, feeds, description)`` and one
oracle function ``oracle(feeds) -> list[np.ndarray]`` that computes the model's outputs (in
graph output order) with a plain NumPy loop, so the benchmark is known to time correct programs.
Builders take size keywords; `WORKLOADS` lists each one with its benchmark and test sizes.

Models use opset 17 and IR version 8, which ONNX Runtime and OpenVINO's ONNX importer both read.
Feeds are arrays (0-d arrays for scalars, never NumPy scalars).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx import helper as h

OPSET = 17
IR_VERSION = 8
F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
f32 = np.float32

Built = tuple[onnx.ModelProto, dict[str, np.ndarray], str]


# ----------------------------------------------------------------------------- helpers


def _vi(name: str, elem: int = F, shape=None) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def _init(name: str, value, dtype=None) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def _model(nodes, inputs, outputs, inits=(), name: str = "bench") -> onnx.ModelProto:
    graph = h.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)],
                         ir_version=IR_VERSION, producer_name="itergraph-bench")
    onnx.checker.check_model(model, full_check=True)
    return model


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-x))).astype(x.dtype)


# ----------------------------------------------------------------------------- 1. tiny_loop


def tiny_loop(n: int = 10_000) -> Built:
    """ONNX Loop with trip count input M and no condition; body: x = x + 1 (scalar float)."""
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Add", ["x_in", "one"], ["x_out"])],
        "tiny_body",
        [_vi("i", I64, []), _vi("cond_in", BOOL, []), _vi("x_in", F, [])],
        [_vi("cond_out", BOOL, []), _vi("x_out", F, [])],
        [_init("one", 1.0, f32)],
    )
    loop = h.make_node("Loop", ["M", "", "x0"], ["x"], body=body, name="tiny_loop")
    model = _model([loop], [_vi("M", I64, []), _vi("x0", F, [])], [_vi("x", F, [])])
    feeds = {"M": np.array(n, np.int64), "x0": np.array(0.0, f32)}
    return model, feeds, f"ONNX Loop, {n} iterations, scalar body x = x + 1"


def tiny_loop_oracle(feeds) -> list[np.ndarray]:
    x = np.array(feeds["x0"], f32)
    for _ in range(int(feeds["M"])):
        x = x + f32(1.0)
    return [x]


# ----------------------------------------------------------------------------- 2. while_loop


def while_loop(threshold: float = 950.0) -> Built:
    """ONNX Loop without trip count: x = 0.999 x + 1 while x < threshold; scan output of x.

    The recurrence contracts toward 1000, so rounding differences between engines cannot
    change the iteration count (~3,000 iterations for threshold 950).
    """
    body = h.make_graph(
        [h.make_node("Mul", ["x_in", "a"], ["ax"]),
         h.make_node("Add", ["ax", "b"], ["x_out"]),
         h.make_node("Less", ["x_out", "thr"], ["cond_out"]),
         h.make_node("Identity", ["x_out"], ["x_scan"])],
        "while_body",
        [_vi("i", I64, []), _vi("cond_in", BOOL, []), _vi("x_in", F, [])],
        [_vi("cond_out", BOOL, []), _vi("x_out", F, []), _vi("x_scan", F, [])],
        [_init("a", 0.999, f32), _init("b", 1.0, f32)],
    )
    loop = h.make_node("Loop", ["", "cond", "x0"], ["x", "xs"], body=body, name="while_loop")
    model = _model([loop], [_vi("cond", BOOL, []), _vi("x0", F, []), _vi("thr", F, [])],
                   [_vi("x", F, []), _vi("xs", F, ["N"])])
    feeds = {"cond": np.array(True), "x0": np.array(0.0, f32), "thr": np.array(threshold, f32)}
    return model, feeds, f"ONNX Loop, no trip count: x = 0.999x + 1 until x >= {threshold:g}"


def while_loop_oracle(feeds) -> list[np.ndarray]:
    x, xs = np.array(feeds["x0"], f32), []
    cond = bool(feeds["cond"])
    while cond:
        x = x * f32(0.999) + f32(1.0)
        xs.append(x)
        cond = bool(x < feeds["thr"])
    return [x, np.array(xs, f32)]


# ----------------------------------------------------------------------------- 3. rnn_scan


def _rnn_weights(inp: int, hidden: int, seed: int):
    rng = _rng(seed)
    w = (rng.standard_normal((inp, hidden)) / np.sqrt(inp)).astype(f32)
    r = (rng.standard_normal((hidden, hidden)) * 0.9 / np.sqrt(hidden)).astype(f32)
    b = (rng.standard_normal(hidden) * 0.1).astype(f32)
    return w, r, b


def rnn_scan(batch: int = 1, seq: int = 100, inp: int = 64, hidden: int = 128) -> Built:
    """tanh RNN as ONNX Scan: h = tanh(x_t W + h R + b); outputs final h and all h_t."""
    w, r, b = _rnn_weights(inp, hidden, seed=1)
    body = h.make_graph(
        [h.make_node("MatMul", ["x_t", "W"], ["xw"]),
         h.make_node("MatMul", ["h_in", "R"], ["hr"]),
         h.make_node("Add", ["xw", "hr"], ["s"]),
         h.make_node("Add", ["s", "b"], ["pre"]),
         h.make_node("Tanh", ["pre"], ["h_out"]),
         h.make_node("Identity", ["h_out"], ["y_t"])],
        "rnn_body",
        [_vi("h_in", F, [batch, hidden]), _vi("x_t", F, [batch, inp])],
        [_vi("h_out", F, [batch, hidden]), _vi("y_t", F, [batch, hidden])],
    )
    scan = h.make_node("Scan", ["h0", "X"], ["h", "Y"], body=body, num_scan_inputs=1,
                       name="rnn_scan")
    model = _model([scan], [_vi("X", F, [seq, batch, inp]), _vi("h0", F, [batch, hidden])],
                   [_vi("h", F, [batch, hidden]), _vi("Y", F, [seq, batch, hidden])],
                   [_init("W", w), _init("R", r), _init("b", b)])
    rng = _rng(100 + batch)
    feeds = {"X": rng.standard_normal((seq, batch, inp)).astype(f32),
             "h0": np.zeros((batch, hidden), f32)}
    desc = f"tanh RNN as ONNX Scan, batch {batch}, seq {seq}, input {inp}, hidden {hidden}"
    return model, feeds, desc


def rnn_scan_oracle(feeds) -> list[np.ndarray]:
    x = feeds["X"]
    hdn = feeds["h0"]
    w, r, b = _rnn_weights(x.shape[2], hdn.shape[1], seed=1)
    ys = []
    for t in range(x.shape[0]):
        hdn = np.tanh(x[t] @ w + hdn @ r + b)
        ys.append(hdn)
    return [hdn, np.stack(ys)]


# ----------------------------------------------------------------------------- 4. lstm_scan


def _lstm_weights(inp: int, hidden: int, seed: int):
    rng = _rng(seed)
    w = (rng.standard_normal((inp, 4 * hidden)) / np.sqrt(inp)).astype(f32)
    r = (rng.standard_normal((hidden, 4 * hidden)) / np.sqrt(hidden)).astype(f32)
    b = (rng.standard_normal(4 * hidden) * 0.1).astype(f32)
    return w, r, b


def _lstm_body_nodes(hidden: int, order: str) -> list[onnx.NodeProto]:
    """Gates = x_t W + h R + b, split into 4 blocks in `order` ('ifgo' or OpenVINO's 'fico')."""
    names = {"i": "gi", "f": "gf", "g": "gg", "c": "gg", "o": "go"}
    return [
        h.make_node("MatMul", ["x_t", "W"], ["xw"]),
        h.make_node("MatMul", ["h_in", "R"], ["hr"]),
        h.make_node("Add", ["xw", "hr"], ["s"]),
        h.make_node("Add", ["s", "b"], ["gates"]),
        h.make_node("Split", ["gates", "split4"], [names[k] for k in order], axis=-1),
        h.make_node("Sigmoid", ["gi"], ["si"]),
        h.make_node("Sigmoid", ["gf"], ["sf"]),
        h.make_node("Tanh", ["gg"], ["tg"]),
        h.make_node("Sigmoid", ["go"], ["so"]),
        h.make_node("Mul", ["sf", "c_in"], ["fc"]),
        h.make_node("Mul", ["si", "tg"], ["ig"]),
        h.make_node("Add", ["fc", "ig"], ["c_out"]),
        h.make_node("Tanh", ["c_out"], ["tc"]),
        h.make_node("Mul", ["so", "tc"], ["h_out"]),
        h.make_node("Identity", ["h_out"], ["y_t"]),
    ]


def _lstm_step(x_t, hdn, c, w, r, b, order: str):
    gates = x_t @ w + hdn @ r + b
    blocks = dict(zip(order, np.split(gates, 4, axis=-1)))
    g = blocks.get("g", blocks.get("c"))
    c = _sigmoid(blocks["f"]) * c + _sigmoid(blocks["i"]) * np.tanh(g)
    hdn = _sigmoid(blocks["o"]) * np.tanh(c)
    return hdn, c


def lstm_scan(batch: int = 1, seq: int = 100, inp: int = 64, hidden: int = 128) -> Built:
    """LSTM (gate order i, f, g, o) as ONNX Scan; outputs final h, final c and all h_t."""
    w, r, b = _lstm_weights(inp, hidden, seed=2)
    state = [batch, hidden]
    body = h.make_graph(
        _lstm_body_nodes(hidden, "ifgo"), "lstm_body",
        [_vi("h_in", F, state), _vi("c_in", F, state), _vi("x_t", F, [batch, inp])],
        [_vi("h_out", F, state), _vi("c_out", F, state), _vi("y_t", F, state)],
    )
    scan = h.make_node("Scan", ["h0", "c0", "X"], ["h", "c", "Y"], body=body,
                       num_scan_inputs=1, name="lstm_scan")
    model = _model(
        [scan],
        [_vi("X", F, [seq, batch, inp]), _vi("h0", F, state), _vi("c0", F, state)],
        [_vi("h", F, state), _vi("c", F, state), _vi("Y", F, [seq, batch, hidden])],
        [_init("W", w), _init("R", r), _init("b", b), _init("split4", [hidden] * 4, np.int64)])
    rng = _rng(200 + batch)
    feeds = {"X": rng.standard_normal((seq, batch, inp)).astype(f32),
             "h0": np.zeros(state, f32), "c0": np.zeros(state, f32)}
    desc = f"LSTM as ONNX Scan, batch {batch}, seq {seq}, input {inp}, hidden {hidden}"
    return model, feeds, desc


def lstm_scan_oracle(feeds) -> list[np.ndarray]:
    x, hdn, c = feeds["X"], feeds["h0"], feeds["c0"]
    w, r, b = _lstm_weights(x.shape[2], hdn.shape[1], seed=2)
    ys = []
    for t in range(x.shape[0]):
        hdn, c = _lstm_step(x[t], hdn, c, w, r, b, "ifgo")
        ys.append(hdn)
    return [hdn, c, np.stack(ys)]


# ----------------------------------------------------------------------------- 5. ti_lstm


def ti_lstm_weights(inp: int = 512, hidden: int = 256, seed: int = 3):
    """OpenVINO LSTMCell layout: W [4H, in], R [4H, H], B [4H], gate blocks in order f, i, c, o."""
    rng = _rng(seed)
    w = (rng.standard_normal((4 * hidden, inp)) / np.sqrt(inp)).astype(f32)
    r = (rng.standard_normal((4 * hidden, hidden)) / np.sqrt(hidden)).astype(f32)
    b = (rng.standard_normal(4 * hidden) * 0.1).astype(f32)
    return w, r, b


def _ti_feeds(seq: int, inp: int, hidden: int) -> dict[str, np.ndarray]:
    rng = _rng(300)
    return {"X": rng.standard_normal((1, seq, inp)).astype(f32),
            "H0": (rng.standard_normal((1, hidden)) * 0.1).astype(f32),
            "C0": (rng.standard_normal((1, hidden)) * 0.1).astype(f32)}


def ti_lstm(seq: int = 25, inp: int = 512, hidden: int = 256) -> Built:
    """The OpenVINO TensorIterator spec's Example 2 (LSTMCell over axis 1) as an ONNX Scan.

    X [1, seq, in] is sliced on axis 1 and Y [1, seq, H] is concatenated on axis 1 (Scan's
    scan_input_axes / scan_output_axes); the body is the LSTMCell written in ONNX ops, with
    OpenVINO's weight layout and f, i, c, o gate order so `ti_lstm_openvino` uses the same weights.
    """
    w, r, b = ti_lstm_weights(inp, hidden)
    state = [1, hidden]
    body = h.make_graph(
        _lstm_body_nodes(hidden, "fico"), "ti_lstm_body",
        [_vi("h_in", F, state), _vi("c_in", F, state), _vi("x_t", F, [1, inp])],
        [_vi("h_out", F, state), _vi("c_out", F, state), _vi("y_t", F, state)],
    )
    scan = h.make_node("Scan", ["H0", "C0", "X"], ["H", "C", "Y"], body=body,
                       num_scan_inputs=1, scan_input_axes=[1], scan_output_axes=[1],
                       name="ti_lstm")
    model = _model(
        [scan],
        [_vi("X", F, [1, seq, inp]), _vi("H0", F, state), _vi("C0", F, state)],
        [_vi("Y", F, [1, seq, hidden])],
        [_init("W", w.T.copy()), _init("R", r.T.copy()), _init("b", b),
         _init("split4", [hidden] * 4, np.int64)])
    desc = (f"OpenVINO TI spec Example 2 as ONNX Scan (axis 1): LSTM {inp}->{hidden}, "
            f"{seq} steps, batch 1")
    return model, _ti_feeds(seq, inp, hidden), desc


def ti_lstm_oracle(feeds) -> list[np.ndarray]:
    x, hdn, c = feeds["X"], feeds["H0"], feeds["C0"]
    w, r, b = ti_lstm_weights(x.shape[2], hdn.shape[1])
    ys = []
    for t in range(x.shape[1]):
        hdn, c = _lstm_step(x[:, t], hdn, c, w.T, r.T, b, "fico")
        ys.append(hdn)
    return [np.stack(ys, axis=1)]


def ti_lstm_openvino(path, seq: int = 25, inp: int = 512, hidden: int = 256):
    """Build Example 2 as a real OpenVINO TensorIterator (LSTMCell body) and save it to `path`.

    Returns ``(feeds, description)``; the feeds and weights equal `ti_lstm`'s, so both forms
    compute the same Y. Needs the `openvino` package.
    """
    import openvino as ov
    import openvino.opset13 as ops

    w, r, b = ti_lstm_weights(inp, hidden)
    x = ops.parameter([1, seq, inp], np.float32, name="X")
    h0 = ops.parameter([1, hidden], np.float32, name="H0")
    c0 = ops.parameter([1, hidden], np.float32, name="C0")

    px = ops.parameter([1, 1, inp], np.float32, name="x_t")
    ph = ops.parameter([1, hidden], np.float32, name="h_in")
    pc = ops.parameter([1, hidden], np.float32, name="c_in")
    x2 = ops.reshape(px, ops.constant(np.array([1, inp], np.int64)), special_zero=False)
    cell = ops.lstm_cell(x2, ph, pc, ops.constant(w), ops.constant(r), ops.constant(b),
                         hidden_size=hidden)
    h_res = ops.result(cell.output(0))
    c_res = ops.result(cell.output(1))
    y3 = ops.reshape(cell.output(0), ops.constant(np.array([1, 1, hidden], np.int64)),
                     special_zero=False)
    y_res = ops.result(y3)
    body = ov.Model([h_res, c_res, y_res], [px, ph, pc], "ti_body")

    ti = ops.tensor_iterator()
    ti.set_body(body)
    ti.set_sliced_input(px, x.output(0), 0, 1, 1, -1, 1)
    ti.set_merged_input(ph, h0.output(0), h_res.output(0))
    ti.set_merged_input(pc, c0.output(0), c_res.output(0))
    y = ti.get_concatenated_slices(y_res.output(0), 0, 1, 1, -1, 1)
    out = ops.result(y)
    out.get_output_tensor(0).set_names({"Y"})
    model = ov.Model([out], [x, h0, c0], "ti_lstm")
    ov.save_model(model, str(path), compress_to_fp16=False)
    desc = f"OpenVINO TI spec Example 2 as a real TensorIterator .xml ({seq} steps)"
    return _ti_feeds(seq, inp, hidden), desc


# ----------------------------------------------------------------------------- 6. selective_scan


def _ssm_inputs(length: int, d_inner: int, d_state: int) -> dict[str, np.ndarray]:
    rng = _rng(400)
    return {
        "x": rng.standard_normal((length, d_inner)).astype(f32),
        "delta": rng.uniform(0.001, 0.1, (length, d_inner)).astype(f32),
        "A": (-np.exp(rng.standard_normal((d_inner, d_state)) * 0.5)).astype(f32),
        "B": rng.standard_normal((length, d_state)).astype(f32),
        "C": rng.standard_normal((length, d_state)).astype(f32),
    }


def selective_scan(length: int = 1024, d_inner: int = 256, d_state: int = 16) -> Built:
    """Mamba-style selective scan as an ONNX Loop gathering row t of x, Δ, B, C each step.

    h = exp(Δ_t[:, None] A) h + (Δ_t x_t)[:, None] B_t[None, :];  y_t = sum_s h C_t  -> y [L, D].
    """
    body = h.make_graph(
        [h.make_node("Gather", ["x", "t"], ["x_t"], axis=0),
         h.make_node("Gather", ["delta", "t"], ["d_t"], axis=0),
         h.make_node("Gather", ["B", "t"], ["b_t"], axis=0),
         h.make_node("Gather", ["C", "t"], ["c_t"], axis=0),
         h.make_node("Unsqueeze", ["d_t", "ax1"], ["d_col"]),
         h.make_node("Mul", ["d_col", "A"], ["dA"]),
         h.make_node("Exp", ["dA"], ["decay"]),
         h.make_node("Mul", ["d_t", "x_t"], ["dx"]),
         h.make_node("Unsqueeze", ["dx", "ax1"], ["dx_col"]),
         h.make_node("Unsqueeze", ["b_t", "ax0"], ["b_row"]),
         h.make_node("Mul", ["dx_col", "b_row"], ["inject"]),
         h.make_node("Mul", ["decay", "h_in"], ["kept"]),
         h.make_node("Add", ["kept", "inject"], ["h_out"]),
         h.make_node("Unsqueeze", ["c_t", "ax0"], ["c_row"]),
         h.make_node("Mul", ["h_out", "c_row"], ["hc"]),
         h.make_node("ReduceSum", ["hc", "ax1"], ["y_t"], keepdims=0),
         h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "ssm_body",
        [_vi("t", I64, []), _vi("cond_in", BOOL, []), _vi("h_in", F, [d_inner, d_state])],
        [_vi("cond_out", BOOL, []), _vi("h_out", F, [d_inner, d_state]),
         _vi("y_t", F, [d_inner])],
    )
    nodes = [h.make_node("Loop", ["L", "", "h0"], ["h", "y"], body=body, name="selective_scan")]
    model = _model(
        nodes,
        [_vi("x", F, [length, d_inner]), _vi("delta", F, [length, d_inner]),
         _vi("A", F, [d_inner, d_state]), _vi("B", F, [length, d_state]),
         _vi("C", F, [length, d_state])],
        [_vi("h", F, [d_inner, d_state]), _vi("y", F, [length, d_inner])],
        [_init("L", length, np.int64), _init("h0", np.zeros((d_inner, d_state), f32)),
         _init("ax0", [0], np.int64), _init("ax1", [1], np.int64)])
    desc = (f"Mamba selective scan as ONNX Loop (Gather row t), L={length}, "
            f"d_inner={d_inner}, d_state={d_state}")
    return model, _ssm_inputs(length, d_inner, d_state), desc


def selective_scan_oracle(feeds) -> list[np.ndarray]:
    x, delta, a, b, c = (feeds[k] for k in ("x", "delta", "A", "B", "C"))
    hs = np.zeros(a.shape, f32)
    ys = []
    for t in range(x.shape[0]):
        hs = np.exp(delta[t][:, None] * a) * hs + (delta[t] * x[t])[:, None] * b[t][None, :]
        ys.append((hs * c[t][None, :]).sum(axis=1))
    return [hs, np.stack(ys)]


# ----------------------------------------------------------------------------- 7. nested_loops


def _nested_weights(width: int, seed: int = 5) -> np.ndarray:
    return (_rng(seed).standard_normal((width, width)) * 0.5 / np.sqrt(width)).astype(f32)


def nested_loops(outer: int = 100, inner: int = 100, width: int = 16) -> Built:
    """Outer Loop over rows v = X[i]; inner Loop s = tanh(s W + v) starting from the outer state.

    The inner body captures `v` from the outer body and `W` from the top graph; the outer loop
    carries h = inner result and scans it out -> H [outer, width].
    """
    inner_body = h.make_graph(
        [h.make_node("MatMul", ["s_in", "W"], ["sw"]),
         h.make_node("Add", ["sw", "v"], ["pre"]),
         h.make_node("Tanh", ["pre"], ["s_out"]),
         h.make_node("Identity", ["icond_in"], ["icond_out"])],
        "inner_body",
        [_vi("j", I64, []), _vi("icond_in", BOOL, []), _vi("s_in", F, [width])],
        [_vi("icond_out", BOOL, []), _vi("s_out", F, [width])],
    )
    outer_body = h.make_graph(
        [h.make_node("Gather", ["X", "i"], ["v"], axis=0),
         h.make_node("Loop", ["N_in", "", "h_in"], ["h_out"], body=inner_body, name="inner"),
         h.make_node("Identity", ["h_out"], ["h_scan"]),
         h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "outer_body",
        [_vi("i", I64, []), _vi("cond_in", BOOL, []), _vi("h_in", F, [width])],
        [_vi("cond_out", BOOL, []), _vi("h_out", F, [width]), _vi("h_scan", F, [width])],
    )
    loop = h.make_node("Loop", ["N_out", "", "h0"], ["h", "H"], body=outer_body, name="outer")
    model = _model(
        [loop],
        [_vi("X", F, [outer, width]), _vi("h0", F, [width]), _vi("N_in", I64, [])],
        [_vi("h", F, [width]), _vi("H", F, [outer, width])],
        [_init("N_out", outer, np.int64), _init("W", _nested_weights(width))])
    rng = _rng(500)
    feeds = {"X": (rng.standard_normal((outer, width)) * 0.5).astype(f32),
             "h0": np.zeros(width, f32), "N_in": np.array(inner, np.int64)}
    desc = f"nested ONNX Loops {outer} x {inner}, inner body tanh(s W + v) on width {width}"
    return model, feeds, desc


def nested_loops_oracle(feeds) -> list[np.ndarray]:
    x, hs = feeds["X"], feeds["h0"]
    w = _nested_weights(x.shape[1])
    inner = int(feeds["N_in"])
    out = []
    for i in range(x.shape[0]):
        s = hs
        for _ in range(inner):
            s = np.tanh(s @ w + x[i])
        hs = s
        out.append(hs)
    return [hs, np.stack(out)]


# ----------------------------------------------------------------------------- registry


@dataclass
class Workload:
    """One benchmark row: builder, oracle, sizes, and how to count its loop iterations."""

    name: str
    build: Callable[..., Built]
    oracle: Callable[[dict], list[np.ndarray]]
    kwargs: dict = field(default_factory=dict)
    small: dict = field(default_factory=dict)
    iterations: Callable[[dict, list], int] | None = None  # set: report µs per iteration

    def make(self, small: bool = False) -> Built:
        return self.build(**(self.small if small else self.kwargs))


WORKLOADS: list[Workload] = [
    Workload("tiny_loop", tiny_loop, tiny_loop_oracle, {"n": 10_000}, {"n": 50},
             iterations=lambda feeds, outs: int(feeds["M"])),
    Workload("while_loop", while_loop, while_loop_oracle, {"threshold": 950.0},
             {"threshold": 30.0}, iterations=lambda feeds, outs: int(np.shape(outs[1])[0])),
    Workload("rnn_scan_b1", rnn_scan, rnn_scan_oracle, {"batch": 1}, {"batch": 1, "seq": 5}),
    Workload("rnn_scan_b16", rnn_scan, rnn_scan_oracle, {"batch": 16}, {"batch": 3, "seq": 5}),
    Workload("lstm_scan_b1", lstm_scan, lstm_scan_oracle, {"batch": 1}, {"batch": 1, "seq": 5}),
    Workload("lstm_scan_b16", lstm_scan, lstm_scan_oracle, {"batch": 16},
             {"batch": 3, "seq": 5}),
    Workload("ti_lstm", ti_lstm, ti_lstm_oracle, {}, {"seq": 4, "inp": 32, "hidden": 16}),
    Workload("selective_scan", selective_scan, selective_scan_oracle, {},
             {"length": 16, "d_inner": 8, "d_state": 4}),
    Workload("nested_loops", nested_loops, nested_loops_oracle, {},
             {"outer": 5, "inner": 100, "width": 4},
             iterations=lambda feeds, outs: int(feeds["X"].shape[0]) * int(feeds["N_in"])),
]

BY_NAME = {w.name: w for w in WORKLOADS}
