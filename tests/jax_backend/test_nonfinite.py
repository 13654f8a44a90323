"""Both backends against ONNX Runtime on inputs holding inf and NaN.

ONNX follows IEEE arithmetic: ``0 * inf`` and ``0 * nan`` are NaN, whatever made the 0. XLA's
algebraic simplifier rewrites ``convert(p) * y`` (a bool cast to float, times y) into
``select(p, y, 0)``, which drops that NaN; the JAX backend casts bool to float as a select of
1 and 0 instead. Found by a mutation campaign (issue 28) on scikit-learn's k-neighbours
distance model with +inf in X (NaN on NumPy and ONNX Runtime, none on JAX). The other cases
guard the ops a distance model is made of (Sqrt, TopK, Min/Max, Where, MatMul) on the same
inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as h

import itergraph as ig
from onnx_builders import const, model, run_ort, vi

F, D, H, B, I64 = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16,
                   TensorProto.BOOL, TensorProto.INT64)
_INF, _NAN = np.inf, np.nan
X = np.array([[1.0, _NAN, -_INF, 2.0], [_INF, -1.0, 0.0, _NAN], [3.0, -_INF, _INF, -2.0]])
Y = np.array([[_INF, 0.0, 1.0, -1.0], [0.0, _NAN, -_INF, 5.0], [2.0, 2.0, _NAN, 0.0]])
C = np.array([[True, False, True, False]] * 3)
_NP = {F: np.float32, D: np.float64, H: np.float16}


def _mask_times(elem: int, cast: str, mask_first: bool):
    """``Mul(Cast(c), x)`` (or CastLike, or the operands swapped): x where c, else 0 * x."""
    cast_node = (h.make_node("Cast", ["c"], ["cf"], to=elem) if cast == "Cast"
                 else h.make_node("CastLike", ["c", "x"], ["cf"]))
    mul = h.make_node("Mul", ["cf", "x"] if mask_first else ["x", "cf"], ["z"])
    m = model([cast_node, mul], [vi("c", B, [3, 4]), vi("x", elem, [3, 4])],
              [vi("z", elem, [3, 4])])
    return m, {"c": C, "x": X.astype(_NP[elem])}


def _agreeing_ops():
    """Single-node models whose results ONNX Runtime and both backends share on X and Y."""
    two = [vi("x", F, [3, 4]), vi("y", F, [3, 4])]
    xy = {"x": X.astype(np.float32), "y": Y.astype(np.float32)}
    x_only = {"x": X.astype(np.float32)}
    cases = {}
    for op in ("Sqrt", "Neg", "Abs", "Relu", "Exp", "Log"):
        cases[op] = (model([h.make_node(op, ["x"], ["z"])], two[:1], [vi("z", F, [3, 4])]),
                     x_only)
    for op in ("Min", "Max", "Sub", "Mul", "Div"):
        cases[op] = (model([h.make_node(op, ["x", "y"], ["z"])], two, [vi("z", F, [3, 4])]), xy)
    cases["Where"] = (model([h.make_node("Where", ["c", "x", "y"], ["z"])],
                            [vi("c", B, [3, 4]), *two], [vi("z", F, [3, 4])]), {"c": C, **xy})
    cases["MatMul"] = (model([h.make_node("MatMul", ["x", "y"], ["z"])],
                             [two[0], vi("y", F, [4, 3])], [vi("z", F, [3, 3])]),
                       {"x": xy["x"], "y": xy["y"].reshape(4, 3)})
    for largest in (0, 1):
        cases[f"TopK-largest{largest}"] = (model(
            [h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)], two[:1],
            [vi("v", F, [3, 2]), vi("i", I64, [3, 2])], [const("k", [2], np.int64)]), x_only)
    return cases


def _check(m: onnx.ModelProto, feeds: dict, backend: str) -> None:
    want = run_ort(m, feeds)
    got = ig.load(m).run(feeds, backend=backend)
    for name, w in want.items():
        g = np.asarray(got[name])
        assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-6, equal_nan=True, err_msg=f"{name} ({backend})")


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("mask_first", [True, False])
@pytest.mark.parametrize("cast", ["Cast", "CastLike"])
@pytest.mark.parametrize("elem", [F, D, H])
def test_bool_cast_times_nonfinite_is_nan(elem, cast, mask_first, backend):
    _check(*_mask_times(elem, cast, mask_first), backend)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("name", list(_agreeing_ops()))
def test_op_on_nonfinite_as_onnxruntime(name, backend):
    _check(*_agreeing_ops()[name], backend)


_KNN = (Path(__file__).parents[1] / "realworld/models/sklearn"
        / "kneighbors_transformer_distance_op22.onnx")


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("bad", [_INF, _NAN])
def test_sklearn_kneighbors_distance_with_nonfinite_x(bad, backend):
    x = np.load(_KNN.with_suffix(".npz"))["in0"].copy()
    x[0, 0] = bad
    m = onnx.load(_KNN)
    feeds = {m.graph.input[0].name: x}
    want = run_ort(m, feeds)
    assert np.isnan(next(iter(want.values()))).sum() > 4  # the row's 0 * inf of every column
    _check(m, feeds, backend)
