"""Older forms of ops whose meaning changed are read into the current form (`ir.legacy_forms`):
every node of those ops carries the version of that form (no backend meets the old one), both
backends compute what ONNX Runtime computes on the file as its producer wrote it, and the file
itergraph writes back runs in ONNX Runtime with the same results.

ONNX Runtime runs no opset 6 ``Add`` or ``PRelu``: their oracle is the opset 7 model that
spells the old meaning out (B reshaped to line up with A from ``axis``, as the opset 6
specification states); nor ``Tile``-1 (the opset 6 node with its repeats spelled out), nor
``spatial=0`` in training (the formula)."""

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


def _per_activation(opset, outputs=("y",)):
    """``spatial=0``: the parameters per element of ``[C, D1]``."""
    p = RNG.standard_normal((3, 4)).astype(np.float32)
    inits = [_init("s", p), _init("b", -p), _init("m", p / 2), _init("v", np.abs(p) + 0.5)]
    return _model(opset, [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                                      list(outputs), spatial=0, epsilon=1e-3)],
                  _x([2, 3, 4]), _y(*outputs), inits)


def _batch_norm_training(opset, shape=(2, 3, 4), momentum=0.8):
    """Five outputs: training, with the saved batch statistics."""
    inits = [_init("s", C), _init("b", -C), _init("m", C / 2), _init("v", VAR)]
    outs = ["y", "running_mean", "running_var", "saved_mean", "saved_inv_std"]
    return _model(opset, [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], outs,
                                      epsilon=1e-3, momentum=momentum)],
                  _x(shape and list(shape)), _y(*outs), inits)


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
    "batchnorm_7_per_activation": (_per_activation(7), None, 7),
    "batchnorm_9_training_saved_statistics": (_batch_norm_training(9), None, None),
    "batchnorm_7_training_rank_unknown": (_batch_norm_training(7, shape=None), None, None),
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


def test_per_activation_batch_norm_is_the_current_one_on_flattened_input():
    """``spatial=0`` has no later form of its own: the opset 15 node normalises X flattened
    to ``[N, C * D1]`` by the flattened parameters."""
    model = ig.load(_per_activation(7))
    ops = [(n.op_type, n.version) for n in model.graph.nodes]
    assert ("BatchNormalization", 15) in ops and ("Flatten", 7) in ops
    (bn,) = [n for n in model.graph.nodes if n.op_type == "BatchNormalization"]
    assert "spatial" not in bn.attrs and bn.meta[READ_AS] == 7


def test_per_activation_batch_norm_training_normalises_each_activation_by_the_batch():
    """``spatial=0`` in training (ONNX Runtime trains only ``spatial=1``): the formula, each
    element of ``[C, D1]`` normalised by its mean and variance over the batch axis."""
    outs = ("y", "rm", "rv", "sm", "sv")
    m = _per_activation(8, outs)
    s, b, mean, var = (onnx.numpy_helper.to_array(t) for t in m.graph.initializer)
    bm, bv = X.mean(axis=0), X.var(axis=0)
    want = {"y": (X - bm) / np.sqrt(bv + 1e-3) * s + b, "rm": mean * 0.9 + bm * 0.1,
            "rv": var * 0.9 + bv * 0.1, "sm": bm, "sv": 1 / np.sqrt(bv + 1e-3)}
    model = ig.load(m)
    for backend in ("numpy", "jax"):
        got = model.run({"x": X}, backend=backend)
        for k in outs:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


def _tile(opset, tiles, axis, shape=(2, 3, 4), fed=False):
    """``Tile``-1 with `tiles` and `axis` as initializers (graph inputs when `fed`)."""
    t, a = np.array(tiles, np.float32), np.array(axis, np.float32)
    if fed:
        ins = [*_x(shape and list(shape)), h.make_tensor_value_info("t", F, []),
               h.make_tensor_value_info("a", F, [])]
        return _model(opset, [h.make_node("Tile", ["x", "t", "a"], ["y"])], ins, _y()), \
            {"t": t, "a": a}
    return _model(opset, [h.make_node("Tile", ["x", "t", "a"], ["y"])],
                  _x(shape and list(shape)), _y(), [_init("t", t), _init("a", a)]), {}


@pytest.mark.parametrize("fed", [False, True], ids=["constant", "fed"])
@pytest.mark.parametrize("shape", [(2, 3, 4), None], ids=["rank_known", "rank_unknown"])
@pytest.mark.parametrize("tiles,axis", [(2, 1), (3.0, -1), (0, 0)])
def test_tile_1_is_tile_6_with_repeats_at_its_axis(tiles, axis, shape, fed, tmp_path):
    """ONNX Runtime runs no ``Tile``-1: its oracle is the opset 6 node with the repeats
    spelled out (1 on every axis but ``axis``). Written back at opset 6 or later."""
    m, extra = _tile(5, tiles, axis, shape, fed)
    reps = np.ones(3, np.int64)
    reps[axis] = tiles
    oracle = _model(6, [h.make_node("Tile", ["x", "r"], ["y"])], _x(), _y(), [_init("r", reps)])
    want = run_ort(oracle, {"x": X})
    model = ig.load(m)
    assert [n.version for n in model.graph.nodes if n.op_type == "Tile"] == [6]
    feeds = {"x": X, **extra}
    for backend in ("numpy", "jax"):
        assert_same(model.run(feeds, backend=backend), want)
    ig.save(model, tmp_path / "w.onnx")
    assert_same(run_ort(onnx.load(tmp_path / "w.onnx"), feeds), want)


@pytest.mark.parametrize("tiles,axis,says", [(-1, 1, "negative"), (2, 3, "ScatterElements")])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_tile_1_refuses_a_negative_count_or_an_axis_out_of_range(tiles, axis, says, backend):
    m, extra = _tile(5, tiles, axis, fed=True)
    with pytest.raises(ig.Error, match=says):
        ig.load(m).run({"x": X, **extra}, backend=backend)


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


@pytest.mark.parametrize("opset", [7, 9])
@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
@pytest.mark.parametrize("epsilon", [None, 1e-2])
def test_node_suite_batch_norm_at_an_old_opset(epsilon, training, opset, tmp_path):
    """The ONNX node suite's ``BatchNormalization`` cases (``[2, 3, 4, 5]``; ``epsilon``
    default or 1e-2; inference or training) at `opset`, where the node trains when it has
    more than one output (ONNX's converter takes the suite's opset 15 models to no older
    opset). The suite's own reference functions give the expected outputs, on both backends
    and for the file written back (run by ONNX Runtime)."""
    from onnx.backend.test.case.node.batch_normalization import (
        _batchnorm_test_mode,
        _batchnorm_training_mode,
    )

    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    s, bias, mean = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
    var = rng.random(3).astype(np.float32)
    eps = {} if epsilon is None else {"epsilon": epsilon}
    if training:
        outs = ["y", "output_mean", "output_var"]
        expected = _batchnorm_training_mode(x, s, bias, mean, var, 0.9, epsilon or 1e-5)
    else:
        outs = ["y"]
        expected = [_batchnorm_test_mode(x, s, bias, mean, var, epsilon or 1e-5)]
    want = {k: np.asarray(v).astype(np.float32) for k, v in zip(outs, expected)}
    feeds = {"x": x, "s": s, "bias": bias, "mean": mean, "var": var}
    ins = [h.make_tensor_value_info(k, F, list(v.shape)) for k, v in feeds.items()]
    m = _model(opset, [h.make_node("BatchNormalization", list(feeds), outs, **eps)], ins,
               _y(*outs))
    model = ig.load(m)
    assert [n.version for n in model.graph.nodes if n.op_type == "BatchNormalization"] == [15]
    for backend in ("numpy", "jax"):
        assert_same(model.run(feeds, backend=backend), want, rtol=1e-4, atol=1e-5)
    ig.save(model, tmp_path / "w.onnx")
    assert_same(run_ort(onnx.load(tmp_path / "w.onnx"), feeds), want, rtol=1e-4, atol=1e-5)
