"""Models whose intermediate values carry no declared type -> OpenVINO IR, run by OpenVINO.

paddle2onnx writes no ``value_info``: after the first node of such a file nothing says a
value's rank, yet ``GlobalAveragePool`` (reduction axes 2...) and ``Resize`` (per-axis
scales) need it. The writer takes the shapes ONNX's own inference finds; where even that
finds no rank, ``GlobalAveragePool`` takes its axes from the rank OpenVINO knows. The oracle
is ONNX Runtime on the original, with inputs of several sizes through one IR.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper
from onnx import helper as h
from ov_helpers import assert_close, run_ov

import itergraph as ig

F = TensorProto.FLOAT
rng = np.random.default_rng(31)


def _model(nodes, x_dims, inits, opset=11):
    g = h.make_graph(nodes, "paddle_like", [h.make_tensor_value_info("x", F, x_dims)],
                     [h.make_tensor_value_info(o, F, None) for o in nodes[-1].output],
                     [numpy_helper.from_array(np.asarray(v), n) for n, v in inits.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=7)


def _conv_then(tail: list, tail_inits: dict, x_dims=("n", 3, "h", "w")):
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["r"]), *tail]
    return _model(nodes, list(x_dims), {"w": w, **tail_inits})


def _agree(m, shapes, tmp_path):
    assert not m.graph.value_info  # nothing declares an intermediate type
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        want = sess.run(None, {"x": x})
        got = run_ov(xml, {"x": x})
        for a, b in zip(got, want, strict=True):
            assert a.shape == b.shape
            assert_close(a, b, 1e-5, 1e-5, f"OpenVINO on itergraph's IR, input {shape}")


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pool_after_an_untyped_conv(op, tmp_path):
    m = _conv_then([h.make_node(op, ["r"], ["y"])], {})
    _agree(m, [(1, 3, 8, 12), (2, 3, 5, 7)], tmp_path)


def test_resize_after_an_untyped_conv(tmp_path):
    tail = [h.make_node("Resize", ["r", "roi", "scales"], ["y"], mode="nearest")]
    inits = {"roi": np.zeros(0, np.float32),
             "scales": np.array([1, 1, 2, 2], np.float32)}
    m = _conv_then(tail, inits)
    _agree(m, [(1, 3, 6, 10), (1, 3, 4, 4)], tmp_path)


def test_squeeze_excitation_block_untyped(tmp_path):
    """PP-OCR's squeeze-and-excitation: pool, two 1x1 convs, a hard sigmoid, a product."""
    w1 = rng.standard_normal((2, 4, 1, 1)).astype(np.float32)
    w2 = rng.standard_normal((4, 2, 1, 1)).astype(np.float32)
    tail = [h.make_node("GlobalAveragePool", ["r"], ["p"]),
            h.make_node("Conv", ["p", "w1"], ["s1"]), h.make_node("Relu", ["s1"], ["s2"]),
            h.make_node("Conv", ["s2", "w2"], ["s3"]),
            h.make_node("HardSigmoid", ["s3"], ["s4"], alpha=0.2, beta=0.5),
            h.make_node("Mul", ["r", "s4"], ["y"])]
    m = _conv_then(tail, {"w1": w1, "w2": w2})
    _agree(m, [(1, 3, 48, 64), (3, 3, 9, 5)], tmp_path)


def test_global_pool_of_a_value_nothing_types_before_the_run(tmp_path):
    """An ``If`` whose branches declare no shape: the writer cannot know the rank of its
    output, OpenVINO can; the IR reduces over ``Range(2, rank)``, which OpenVINO folds."""
    def branch(op):
        return h.make_graph([h.make_node(op, ["x"], ["b"])], op,
                            [], [h.make_tensor_value_info("b", F, None)])

    nodes = [h.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
             h.make_node("Greater", ["m", "zero"], ["pos"]),
             h.make_node("If", ["pos"], ["i"], then_branch=branch("Relu"),
                         else_branch=branch("Sigmoid")),
             h.make_node("GlobalAveragePool", ["i"], ["y"])]
    m = _model(nodes, ["n", 3, "h", "w"], {"zero": np.float32(0)})
    _agree(m, [(2, 3, 4, 5), (1, 3, 2, 7)], tmp_path)
    assert 'type="Range"' in (tmp_path / "m.xml").read_text()
