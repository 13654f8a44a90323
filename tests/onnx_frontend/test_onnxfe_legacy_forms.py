"""Older forms of ops whose meaning changed are read into the current form (`ir.legacy_forms`):
every node of those ops carries the version of that form (no backend meets the old one), both
backends compute what ONNX Runtime computes on the file as its producer wrote it, and the file
itergraph writes back runs in ONNX Runtime with the same results.

ONNX Runtime runs no opset 6 ``Add`` or ``PRelu``: their oracle is the opset 7 model that
spells the old meaning out (B reshaped to line up with A from ``axis``, as the opset 6
specification states)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig
from itergraph.ir.canonical import READ_AS
from itergraph.ir.legacy_forms import RULES
from onnx_builders import assert_same, run_ort

F = T.FLOAT
RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
C = RNG.standard_normal(3).astype(np.float32)
VAR = (RNG.random(3) + 0.5).astype(np.float32)


def _model(opset, nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    if opset < 7:  # IR version 3: every initializer is also a graph input
        g.input.extend(h.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)],
                        ir_version=3 if opset < 7 else 7)


def _init(name, a):
    return onnx.numpy_helper.from_array(a, name)


def _x(shape=None):
    return [h.make_tensor_value_info("x", F, shape)]


def _y(*names):
    return [h.make_tensor_value_info(n, F, None) for n in names or ("y",)]


def _softmax(op, shape):
    return _model(11, [h.make_node(op, ["x"], ["y"], axis=1)], _x(shape), _y())


def _batch_norm():
    inits = [_init("s", C), _init("b", -C), _init("m", C / 2), _init("v", VAR)]
    return _model(7, [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                  epsilon=1e-3)], _x([2, 3, 4]), _y(), inits)


def _dropout(*outputs):
    return _model(7, [h.make_node("Dropout", ["x"], list(outputs), ratio=0.25)],
                  _x([2, 3, 4]), _y(*outputs))


def _add6(op="Add", b=C):
    return _model(6, [h.make_node(op, ["x", "c"], ["y"], broadcast=1, axis=1)], _x(),
                  _y(), [_init("c", b)])


def _add7(op="Add", b=C):  # the opset 6 meaning spelled out: c reshaped to [3, 1]
    return _model(7, [h.make_node(op, ["x", "c"], ["y"])], _x(), _y(),
                  [_init("c", b.reshape(3, 1))])


def _prelu6():
    return _model(6, [h.make_node("PRelu", ["x", "c"], ["y"])], _x(), _y(), [_init("c", C)])


def _prelu7():
    return _model(7, [h.make_node("PRelu", ["x", "c"], ["y"])], _x(), _y(),
                  [_init("c", C.reshape(3, 1))])


def _upsample(opset, mode, scales):
    if opset < 9:
        return _model(opset, [h.make_node("Upsample", ["x"], ["y"], mode=mode, scales=scales)],
                      _x([2, 3, 4]), _y())
    return _model(opset, [h.make_node("Upsample", ["x", "s"], ["y"], mode=mode)], _x([2, 3, 4]),
                  _y(), [_init("s", np.array(scales, np.float32))])


CASES = {  # name: (the model read, the model ONNX Runtime runs as oracle, opset written back)
    "softmax_11_axis_1": (_softmax("Softmax", None), None, 11),
    "logsoftmax_11_axis_1_rank_3": (_softmax("LogSoftmax", [2, 3, 4]), None, 11),
    "hardmax_11_axis_1": (_softmax("Hardmax", None), None, 11),
    "batchnorm_7": (_batch_norm(), None, 7),
    "dropout_7": (_dropout("y"), None, 7),
    "add_6_broadcast_axis_1": (_add6(), _add7(), None),
    "div_6_broadcast_axis_1": (_add6("Div", C + 2), _add7("Div", C + 2), None),
    "prelu_6_per_channel": (_prelu6(), _prelu7(), None),
    "upsample_7_nearest": (_upsample(7, "nearest", [1.0, 2.0, 3.0]), None, 7),
    "upsample_8_linear": (_upsample(8, "linear", [1.0, 1.5, 2.0]), None, 8),
    "upsample_9_nearest": (_upsample(9, "nearest", [2.0, 1.0, 2.5]), None, 9),
    "upsample_9_linear": (_upsample(9, "linear", [1.0, 2.0, 1.75]), None, 9),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_old_form_is_read_as_the_current_one(name, tmp_path):
    m, oracle, written_opset = CASES[name]
    want = run_ort(oracle or m, {"x": X})
    model = ig.load(m)
    for _, n in model.graph.walk():
        if n.op_type in RULES:
            assert n.version >= RULES[n.op_type][0], (n.op_type, n.version)
    for backend in ("numpy", "jax"):
        assert_same(model.run({"x": X}, backend=backend), want)
    path = tmp_path / "w.onnx"
    ig.save(model, path)
    written = onnx.load(path)
    if written_opset is not None:  # written at the file's opset again
        assert written.opset_import[0].version == written_opset
    assert_same(run_ort(written, {"x": X}), want)


def test_upsample_is_read_as_resize_and_written_back_as_upsample(tmp_path):
    model = ig.load(_upsample(9, "linear", [1.0, 2.0, 1.75]))
    (n,) = model.graph.nodes
    assert (n.op_type, n.version, n.meta[READ_AS]) == ("Resize", 13, 9)
    assert n.attrs == {"mode": "linear", "coordinate_transformation_mode": "asymmetric"}
    ig.save(model, tmp_path / "w.onnx")
    written = onnx.load(tmp_path / "w.onnx")
    assert [p.op_type for p in written.graph.node] == ["Upsample"]


def test_softmax_over_the_last_axis_stays_one_node():
    m = _model(9, [h.make_node("Softmax", ["x"], ["y"], axis=2)], _x([2, 3, 4]), _y())
    (n,) = ig.load(m).graph.nodes
    assert (n.version, n.attrs["axis"], n.meta[READ_AS]) == (13, -1, 9)


def test_per_activation_batch_norm_keeps_its_form():
    """``spatial=0`` has no later form: the node is kept as read (its kernel reads it)."""
    s = RNG.standard_normal((3, 4)).astype(np.float32)
    inits = [_init("s", s), _init("b", s), _init("m", s), _init("v", np.abs(s) + 1)]
    m = _model(7, [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                               spatial=0)], _x([2, 3, 4]), _y(), inits)
    (n,) = ig.load(m).graph.nodes
    assert n.version == 7 and n.attrs["spatial"] == 0


def test_dropout_mask_before_opset_10_keeps_the_input_type():
    """The opset 7 mask has the input's type: the bool mask of the current form is cast back.
    Its values are ``onnx.reference``'s (all kept at inference; ONNX Runtime's opset 7-10
    kernels give an all-zero mask instead)."""
    from onnx.reference import ReferenceEvaluator

    m = _dropout("y", "mask")
    model = ig.load(m)
    assert [(n.op_type, n.version) for n in model.graph.nodes] == [("Dropout", 13), ("Cast", 7)]
    want = ReferenceEvaluator(m).run(None, {"x": X})[1]
    for backend in ("numpy", "jax"):
        mask = model.run({"x": X}, backend=backend)["mask"]
        assert mask.dtype == np.float32
        np.testing.assert_array_equal(mask, want.astype(np.float32))
