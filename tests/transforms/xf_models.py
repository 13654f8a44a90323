"""Small models with one loop of each flavour for the transform tests, and the peers that
check a transformed model: ONNX Runtime and OpenVINO on the files `ig.save` writes."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper
from openvino import opset13 as ops

import itergraph as ig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realworld"))
from peers import PEERS  # noqa: E402

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
RNG = np.random.default_rng(7)


def rand(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, inits=(), opset=17) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _const(name, value, dtype=np.int64):
    return helper.make_node("Constant", [], [name], name=f"{name}_c",
                            value=onnx.numpy_helper.from_array(np.asarray(value, dtype)))


def onnx_loop(n=5, static_if: bool = False) -> onnx.ModelProto:
    """acc += x[i]; y = tanh(acc) per step (used); a dead counter, an unused scan output
    (acc * v), a second loop nobody reads. The trip count is Gather(Shape(x), 0)."""
    body_nodes = [
        helper.make_node("Gather", ["x", "i"], ["xi"], name="take_row"),
        helper.make_node("Add", ["acc", "xi"], ["acc_out"], name="accumulate"),
        helper.make_node("Tanh", ["acc_out"], ["y_step"], name="squash"),
        helper.make_node("Mul", ["acc_out", "v"], ["dead_step"], name="dead_mul"),
        _const("one", 1.0, np.float32),
        helper.make_node("Add", ["cnt", "one"], ["cnt_out"], name="count"),
        helper.make_node("Identity", ["cond"], ["cond_out"], name="keep_going"),
    ]
    if static_if:  # acc_out through an If whose condition is Equal(Shape(xi)[0], 3)
        body_nodes[1:2] = [
            helper.make_node("Add", ["acc", "xi"], ["acc_sum"], name="accumulate"),
            helper.make_node("Shape", ["xi"], ["xi_shape"], name="xi_shape"),
            _const("zero_idx", 0), _const("three", 3),
            helper.make_node("Gather", ["xi_shape", "zero_idx"], ["xi_len"], name="xi_len"),
            helper.make_node("Equal", ["xi_len", "three"], ["is3"], name="is3"),
            helper.make_node("If", ["is3"], ["acc_out"], name="pick",
                             then_branch=helper.make_graph(
                                 [helper.make_node("Identity", ["acc_sum"], ["t_out"])],
                                 "then", [], [vi("t_out", F, [3])]),
                             else_branch=helper.make_graph(
                                 [helper.make_node("Neg", ["acc_sum"], ["e_out"])],
                                 "else", [], [vi("e_out", F, [3])])),
        ]
    body = helper.make_graph(
        body_nodes, "body",
        [vi("i", I64, []), vi("cond", B, []), vi("acc", F, [3]), vi("cnt", F, [])],
        [vi("cond_out", B, []), vi("acc_out", F, [3]), vi("cnt_out", F, []),
         vi("y_step", F, [3]), vi("dead_step", F, [3])])
    dead_body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Neg", ["s"], ["s_out"])], "dead_body",
        [vi("j", I64, []), vi("c", B, []), vi("s", F, [3])], [vi("c_out", B, []),
                                                               vi("s_out", F, [3])])
    nodes = [
        helper.make_node("Shape", ["x"], ["x_shape"], name="x_shape"),
        _const("zero", 0),
        helper.make_node("Gather", ["x_shape", "zero"], ["trip"], name="trip"),
        helper.make_node("Loop", ["trip", "", "a0", "c0"], ["acc_final", "cnt_final", "y",
                                                             "dead_y"], body=body,
                         name="main_loop"),
        helper.make_node("Loop", ["trip", "", "a0"], ["unused"], body=dead_body,
                         name="dead_loop"),
    ]
    return _model(nodes, [vi("x", F, [n, 3]), vi("a0", F, [3]), vi("v", F, [3])],
                  [vi("acc_final", F, [3]), vi("y", F, [n, 3])],
                  [onnx.numpy_helper.from_array(np.float32(0), "c0")])


def onnx_loop_feeds(n: int = 5) -> dict:
    return {"x": rand(n, 3), "a0": rand(3), "v": rand(3)}


def onnx_scan(n=5, static_if: bool = False) -> onnx.ModelProto:
    """A Scan: state s += x_t, out tanh(s); an unused scan input z (same length as x), an
    unused scan output and an unused final state."""
    nodes = [helper.make_node("Add", ["s", "xt"], ["s_out"], name="step_add"),
             helper.make_node("Tanh", ["s_out"], ["o"], name="step_tanh"),
             helper.make_node("Sigmoid", ["zt"], ["dead_o"], name="dead_sig"),
             helper.make_node("Mul", ["u", "xt"], ["u_out"], name="dead_state")]
    if static_if:
        nodes[1:2] = [
            helper.make_node("Size", ["xt"], ["xt_size"], name="xt_size"),
            _const("three", 3),
            helper.make_node("Equal", ["xt_size", "three"], ["is3"], name="is3"),
            helper.make_node("If", ["is3"], ["o"], name="pick",
                             then_branch=helper.make_graph(
                                 [helper.make_node("Tanh", ["s_out"], ["t_out"])],
                                 "then", [], [vi("t_out", F, [3])]),
                             else_branch=helper.make_graph(
                                 [helper.make_node("Sin", ["s_out"], ["e_out"])],
                                 "else", [], [vi("e_out", F, [3])]))]
    body = helper.make_graph(
        nodes, "scan_body", [vi("s", F, [3]), vi("u", F, [3]), vi("xt", F, [3]),
                             vi("zt", F, [3])],
        [vi("s_out", F, [3]), vi("u_out", F, [3]), vi("o", F, [3]), vi("dead_o", F, [3])])
    scan = helper.make_node("Scan", ["s0", "u0", "x", "z"], ["s_final", "u_final", "out",
                                                             "dead_out"],
                            body=body, num_scan_inputs=2, name="the_scan")
    return _model([scan], [vi("s0", F, [3]), vi("u0", F, [3]), vi("x", F, [n, 3]),
                           vi("z", F, [n, 3])],
                  [vi("s_final", F, [3]), vi("out", F, [n, 3])])


def onnx_scan_feeds(n: int = 5) -> dict:
    return {"s0": rand(3), "u0": rand(3), "x": rand(n, 3), "z": rand(n, 3)}


def ov_tensor_iterator(n: int = 5) -> ov.Model:
    """TensorIterator: h = tanh(h + x_t * w) over x's rows; an unused invariant, an unused
    sliced input of the same length, an unused concatenated output."""
    X = ops.parameter([n, 3], np.float32, name="X")
    Z = ops.parameter([n, 3], np.float32, name="Z")
    H = ops.parameter([1, 3], np.float32, name="H")
    W = ops.parameter([3], np.float32, name="W")
    U = ops.parameter([3], np.float32, name="U")
    xi = ops.parameter([1, 3], np.float32, name="xi")
    zi = ops.parameter([1, 3], np.float32, name="zi")
    hi = ops.parameter([1, 3], np.float32, name="hi")
    wi = ops.parameter([3], np.float32, name="wi")
    ui = ops.parameter([3], np.float32, name="ui")
    h2 = ops.tanh(ops.add(hi, ops.multiply(xi, wi)))
    rh = ops.result(h2)
    rdead = ops.result(ops.multiply(ops.sigmoid(zi), ui))
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([rh, rdead], [xi, zi, hi, wi, ui], "body"))
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 0)
    ti.set_sliced_input(zi, Z.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(hi, H.output(0), rh.output(0))
    ti.set_invariant_input(wi, W.output(0))
    ti.set_invariant_input(ui, U.output(0))
    last = ti.get_iter_value(rh.output(0), -1)
    seq = ti.get_concatenated_slices(rh.output(0), 0, 1, 1, -1, 0)
    ti.get_concatenated_slices(rdead.output(0), 0, 1, 1, -1, 0)
    return ov.Model([last, seq], [X, Z, H, W, U], "ti")


def ov_tensor_iterator_feeds(n: int = 5) -> dict:
    return {"X": rand(n, 3), "Z": rand(n, 3), "H": rand(1, 3), "W": rand(3), "U": rand(3)}


def ov_loop(dynamic: bool = False) -> ov.Model:
    """Loop-5 with trip count Gather(ShapeOf(X), 0), X sliced by rows: a += x_t, stacks
    a * w; an unused invariant and an unused carried counter."""
    X = ops.parameter(ov.PartialShape([-1 if dynamic else 5, 3]), np.float32, name="X")
    A = ops.parameter([3], np.float32, name="A")
    W = ops.parameter([3], np.float32, name="W")
    U = ops.parameter([3], np.float32, name="U")
    C0 = ops.parameter([], np.float32, name="C0")
    xi = ops.parameter([1, 3], np.float32, name="xi")
    ai = ops.parameter([3], np.float32, name="ai")
    wi = ops.parameter([3], np.float32, name="wi")
    ui = ops.parameter([3], np.float32, name="ui")
    ci = ops.parameter([], np.float32, name="ci")
    # (a2 = ai + squeeze(xi) * wi is computed wrongly by OpenVINO 2026's CPU plugin)
    a2 = ops.add(ai, ops.squeeze(xi, ops.constant(np.array([0]))))
    ra = ops.result(a2)
    ry = ops.result(ops.unsqueeze(ops.multiply(a2, wi), ops.constant(np.array([0]))))
    rc = ops.result(ops.constant(np.array(True)))
    rcnt = ops.result(ops.add(ops.multiply(ci, ops.constant(np.float32(2))),
                              ops.reduce_sum(ui, ops.constant(np.array([0])), False)))
    trip = ops.gather(ops.shape_of(X), ops.constant(np.int64(0)), ops.constant(np.int64(0)))
    loop = ops.loop(trip, ops.constant(np.array(True)))
    loop.set_function(ov.Model([ra, ry, rc, rcnt], [xi, ai, wi, ui, ci], "body"))
    loop.set_special_body_ports([-1, 2])
    loop.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 0)
    loop.set_merged_input(ai, A.output(0), ra.output(0))
    loop.set_merged_input(ci, C0.output(0), rcnt.output(0))
    loop.set_invariant_input(wi, W.output(0))
    loop.set_invariant_input(ui, U.output(0))
    outs = [loop.get_iter_value(ra.output(0), -1),
            loop.get_concatenated_slices(ry.output(0), 0, 1, 1, -1, 0)]
    loop.get_iter_value(rcnt.output(0), -1)
    return ov.Model(outs, [X, A, W, U, C0], "loop")


def ov_loop_feeds(n: int = 5) -> dict:
    return {"X": rand(n, 3), "A": rand(3), "W": rand(3), "U": rand(3), "C0": rand()}


def as_file(model, tmp_path: Path, name: str) -> Path:
    """`model` (ONNX proto or OpenVINO model) written as the user's file."""
    if isinstance(model, onnx.ModelProto):
        path = tmp_path / f"{name}.onnx"
        onnx.save(model, path)
    else:
        path = tmp_path / f"{name}.xml"
        ov.save_model(model, path, compress_to_fp16=False)
    return path


FLAVOURS = {
    "onnx.Loop": (onnx_loop, onnx_loop_feeds),
    "onnx.Scan": (onnx_scan, onnx_scan_feeds),
    "openvino.TensorIterator": (ov_tensor_iterator, ov_tensor_iterator_feeds),
    "openvino.Loop": (ov_loop, ov_loop_feeds),
}


def loops_of(model: ig.Model) -> list:
    return [n for _, n in model.graph.walk() if isinstance(n, ig.ir.Loop)]


def assert_same(got: dict, want: dict, what: str, rtol=1e-5, atol=1e-5) -> None:
    assert list(got) == list(want), (what, list(got), list(want))
    for k in want:
        g, w = np.asarray(got[k]), np.asarray(want[k])
        assert g.shape == w.shape, (what, k, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{what}: {k}")


def assert_runs_the_same(before: ig.Model, after: ig.Model, feeds: dict, tmp_path: Path,
                         peers: bool = True) -> None:
    """`after` computes `before`'s outputs on the NumPy backend, and after `ig.save` in
    ONNX Runtime (.onnx) and OpenVINO (.xml)."""
    want = before.run(feeds)
    assert_same(after.run(feeds), want, "itergraph numpy")
    if not peers:
        return
    for suffix, peer in ((".onnx", "onnxruntime"), (".xml", "openvino")):
        path = tmp_path / f"after{suffix}"
        ig.save(after, path)
        if suffix == ".onnx":
            onnx.checker.check_model(str(path), full_check=True)
        got = PEERS.run(peer, path, feeds)
        assert_same(dict(zip(want, got, strict=True)), want, peer)
