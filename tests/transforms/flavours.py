"""Loops of every flavour for the transform tests, and the one check they all go through.

Builders return an ONNX ``ModelProto`` or, for OpenVINO, the path of a saved IR, plus feeds.
`check(source, passes, feeds, tmp_path)` optimizes, then compares the optimized model on
the NumPy backend, and the written ``.onnx`` in ONNX Runtime and ``.xml`` in OpenVINO, with
the original run by its own runtime (ONNX Runtime for ONNX, OpenVINO for IR).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset13 as ops
from onnx import helper as h

import itergraph as ig
from itergraph.transforms import optimize
from onnx_builders import I64, B, F, body, const, model, run_ort, vi

CORE = ov.Core()
RNG = np.random.default_rng(0)


def rand(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def onnx_count_loop(n: int = 5, trip_input: bool = False):
    """``acc += x; s[i] = acc * i`` for a constant (or fed) count: carried value, scan
    output, iteration number and a pass-through condition."""
    b = body([h.make_node("Add", ["acc", "x"], ["acc2"]),
              h.make_node("Cast", ["i"], ["fi"], to=F),
              h.make_node("Mul", ["acc2", "fi"], ["s"]),
              h.make_node("Identity", ["c"], ["c2"])],
             [vi("i", I64, []), vi("c", B, []), vi("acc", F, [3])],
             [vi("c2", B, []), vi("acc2", F, [3]), vi("s", F, [3])])
    inputs = [vi("a0", F, [3]), vi("x", F, [3])]
    feeds = {"a0": rand(3), "x": rand(3)}
    inits = []
    if trip_input:
        inputs.append(vi("n", I64, []))
        feeds["n"] = np.array(n, np.int64)
    else:
        inits.append(const("n", np.int64(n)))
    m = model([h.make_node("Loop", ["n", "", "a0"], ["acc", "ss"], body=b, name="count")],
              inputs, [vi("acc", F, [3]), vi("ss", F, [None, 3])], inits)
    return m, feeds


def onnx_row_loop(rows: int | str = "T"):
    """``for i in range(len(xs)): acc += xs[i]; s[i] = acc * i`` as torch.onnx writes it: the
    trip count is ``Shape(xs)[0]`` and the body gathers row i."""
    b = body([h.make_node("Gather", ["xs", "i"], ["xi"], axis=0),
              h.make_node("Add", ["acc", "xi"], ["acc2"]),
              h.make_node("Cast", ["i"], ["fi"], to=F),
              h.make_node("Mul", ["acc2", "fi"], ["s"]),
              h.make_node("Identity", ["c"], ["c2"])],
             [vi("i", I64, []), vi("c", B, []), vi("acc", F, [3])],
             [vi("c2", B, []), vi("acc2", F, [3]), vi("s", F, [3])])
    m = model([h.make_node("Shape", ["xs"], ["sh"]),
               h.make_node("Gather", ["sh", "zero"], ["n"], axis=0),
               h.make_node("Loop", ["n", "", "a0"], ["acc", "ss"], body=b, name="rows")],
              [vi("a0", F, [3]), vi("xs", F, [rows, 3])],
              [vi("acc", F, [3]), vi("ss", F, [None, 3])], [const("zero", np.int64(0))])
    return m, {"a0": rand(3), "xs": rand(6, 3)}


def onnx_scan(reverse: int = 0, steps: int = 7):
    """A Scan: ``acc += x[t]; y[t] = relu(acc)``, input and output directions opposite."""
    b = body([h.make_node("Add", ["acc", "xi"], ["acc2"]), h.make_node("Relu", ["acc2"], ["y"])],
             [vi("acc", F, [3]), vi("xi", F, [3])], [vi("acc2", F, [3]), vi("y", F, [3])])
    m = model([h.make_node("Scan", ["a0", "xs"], ["acc", "ys"], body=b, num_scan_inputs=1,
                           scan_input_directions=[reverse],
                           scan_output_directions=[1 - reverse], name="scan")],
              [vi("a0", F, [3]), vi("xs", F, [steps, 3])],
              [vi("acc", F, [3]), vi("ys", F, [steps, 3])])
    return m, {"a0": rand(3), "xs": rand(steps, 3)}


def onnx_while_loop():
    """``while acc < 10: acc += x`` (at most 20 steps): a data-dependent condition."""
    b = body([h.make_node("Add", ["acc", "x"], ["acc2"]),
              h.make_node("ReduceSum", ["acc2"], ["tot"], keepdims=0),
              h.make_node("Less", ["tot", "ten"], ["c2"])],
             [vi("i", I64, []), vi("c", B, []), vi("acc", F, [3])],
             [vi("c2", B, []), vi("acc2", F, [3])], [const("ten", np.float32(10))])
    m = model([h.make_node("Loop", ["n", "", "a0"], ["acc"], body=b, name="while")],
              [vi("a0", F, [3]), vi("x", F, [3])], [vi("acc", F, [3])],
              [const("n", np.int64(20))])
    return m, {"a0": np.zeros(3, np.float32), "x": np.abs(rand(3)) + 0.5}


def onnx_nested():
    """A constant-count Loop whose body holds a Scan over a constant and another Loop."""
    inner_b = body([h.make_node("Mul", ["v", "half"], ["v2"]),
                    h.make_node("Identity", ["c"], ["c2"])],
                   [vi("j", I64, []), vi("c", B, []), vi("v", F, [3])],
                   [vi("c2", B, []), vi("v2", F, [3])], [const("half", np.float32(0.5))])
    scan_b = body([h.make_node("Add", ["u", "w"], ["u2"])],
                  [vi("u", F, [3]), vi("w", F, [3])], [vi("u2", F, [3])])
    outer_b = body([h.make_node("Loop", ["two", "", "acc"], ["acc_half"], body=inner_b),
                    h.make_node("Scan", ["acc_half", "ws"], ["acc2"], body=scan_b,
                                num_scan_inputs=1),
                    h.make_node("Identity", ["c"], ["c2"])],
                   [vi("i", I64, []), vi("c", B, []), vi("acc", F, [3])],
                   [vi("c2", B, []), vi("acc2", F, [3])])
    m = model([h.make_node("Loop", ["n", "", "a0"], ["acc"], body=outer_b, name="outer")],
              [vi("a0", F, [3]), vi("ws", F, [4, 3])], [vi("acc", F, [3])],
              [const("n", np.int64(3)), const("two", np.int64(2))])
    return m, {"a0": rand(3), "ws": rand(4, 3)}


def ov_tensor_iterator(tmp_path: Path, steps: int = 5):
    """An OpenVINO TensorIterator: ``h = tanh(h + x[t])``, the last h and every h."""
    x = ops.parameter([steps, 3], np.float32, name="x")
    h0 = ops.parameter([3], np.float32, name="h0")
    xi = ops.parameter([1, 3], np.float32)
    hi = ops.parameter([3], np.float32)
    h2 = ops.tanh(ops.add(hi, ops.squeeze(xi, ops.constant(np.array([0])))))
    last = ops.result(h2)
    piece = ops.result(ops.unsqueeze(h2, ops.constant(np.array([0]))))
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([last, piece], [xi, hi]))
    ti.set_sliced_input(xi, x.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(hi, h0.output(0), last.output(0))
    m = ov.Model([ti.get_iter_value(last.output(0), -1),
                  ti.get_concatenated_slices(piece.output(0), 0, 1, 1, -1, 0)], [x, h0], "ti")
    return _saved(m, tmp_path / "ti.xml"), {"x": rand(steps, 3), "h0": rand(3)}


def ov_loop(tmp_path: Path, trips: int = 4):
    """An OpenVINO Loop with a constant trip count, a constant true condition, the current
    iteration read: ``a = a + x * i``, every ``a`` concatenated."""
    x = ops.parameter([3], np.float32, name="x")
    a0 = ops.parameter([3], np.float32, name="a0")
    it = ops.parameter([1], np.int64, name="it")
    xi = ops.parameter([3], np.float32, name="xi")
    ai = ops.parameter([3], np.float32, name="ai")
    a2 = ops.add(ai, ops.multiply(xi, ops.convert(it, np.float32)))
    ra = ops.result(a2)
    ry = ops.result(ops.unsqueeze(a2, ops.constant(np.array([0]))))
    rc = ops.result(ops.constant(np.array(True)))
    loop = ops.loop(ops.constant(np.int64(trips)), ops.constant(np.array(True)))
    loop.set_function(ov.Model([ra, ry, rc], [it, xi, ai], "body"))
    loop.set_special_body_ports([0, 2])
    loop.set_invariant_input(xi, x.output(0))
    loop.set_merged_input(ai, a0.output(0), ra.output(0))
    m = ov.Model([loop.get_iter_value(ra.output(0), -1),
                  loop.get_concatenated_slices(ry.output(0), 0, 1, 1, -1, 0)], [x, a0], "loop")
    return _saved(m, tmp_path / "loop.xml"), {"x": rand(3), "a0": rand(3)}


def _saved(m: ov.Model, path: Path) -> Path:
    ov.save_model(m, str(path), compress_to_fp16=False)
    return path


def run_ov(path, feeds: dict) -> list[np.ndarray]:
    c = CORE.compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    r = c(feeds)
    return [np.asarray(r[o]) for o in c.outputs]


def run_peer(source, feeds: dict) -> list[np.ndarray]:
    """The original's outputs from its own runtime."""
    if isinstance(source, Path):
        return run_ov(source, feeds)
    return list(run_ort(source, feeds).values())


@dataclass
class Checked:
    model: ig.Model
    onnx_ops: list[str]  # every node's op type in the written .onnx, bodies included
    xml_layers: list[str]  # every layer type in the written .xml, bodies included


def onnx_ops(m: onnx.ModelProto) -> list[str]:
    out = []

    def walk(g):
        for n in g.node:
            out.append(n.op_type)
            for a in n.attribute:
                if a.g.node:
                    walk(a.g)
    walk(m.graph)
    return out


def check(source, passes, feeds: dict, tmp_path: Path, rtol=1e-5, atol=1e-5) -> Checked:
    """Optimize `source` with `passes`; the optimized model on NumPy, its written .onnx in
    ONNX Runtime and its written .xml in OpenVINO all give the original's outputs."""
    want = run_peer(source, feeds)
    opt = optimize(source if not isinstance(source, Path) else str(source), passes)
    got = {"itergraph numpy": list(opt.run(feeds).values())}
    onnx_path, xml_path = tmp_path / "opt.onnx", tmp_path / "opt.xml"
    ig.save(opt, onnx_path)
    ig.save(opt, xml_path)
    written = onnx.load(str(onnx_path))
    got["ONNX Runtime"] = list(run_ort(written, feeds).values())
    got["OpenVINO"] = run_ov(xml_path, feeds)
    for who, outs in got.items():
        assert len(outs) == len(want), who
        for i, (g, w) in enumerate(zip(outs, want)):
            np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=atol,
                                       err_msg=f"{who}, output {i}, after {passes}")
    layers = [layer.get("type") for layer in ET.parse(xml_path).getroot().iter("layer")]
    return Checked(opt, onnx_ops(written), layers)


def loop_ops(ops_: list[str]) -> list[str]:
    return [o for o in ops_ if o in ("Loop", "Scan", "TensorIterator")]
