"""``LabelEncoder`` and ``OneHotEncoder`` (``ai.onnx.ml``) written to OpenVINO IR
(`frontends/openvino/export_ml_encoders.py`): OpenVINO's CPU plugin on itergraph's IR against
ONNX Runtime on the original file, exactly; LabelEncoder on itergraph's NumPy backend too
(its own kernel: ``onnx.reference`` ignores ``default_tensor``). Inputs hit listed keys,
unlisted values, NaN, empty strings and strings that share a prefix with a key."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from test_ov_write_ml_ops import ML, _agree, _ort

import itergraph as ig

STRINGS = np.array([["cat", "dog", ""], ["ca", "catt", "bird"]])  # OpenVINO takes str arrays
INTS = np.array([[3, -1, 7], [0, 3, 12]], np.int64)
FLOATS = np.array([[0.5, np.nan, 2.0], [-1.0, 7.25, 0.5]], np.float32)


def _agree_numpy_too(m: onnx.ModelProto, feeds: dict, tmp_path) -> None:
    _agree(m, feeds, tmp_path)
    want = _ort(m, feeds)[0]
    got = np.asarray(next(iter(ig.load(m).run(feeds).values())))
    assert got.shape == want.shape
    if want.dtype == object:
        np.testing.assert_array_equal(got.astype(str), want.astype(str))
    else:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)


def _model(node, x_type, y_type, shape=(2, 3), ml_version=4) -> onnx.ModelProto:
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", x_type, list(shape))],
                     [h.make_tensor_value_info("Y", y_type, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17),
                                          h.make_opsetid(ML, ml_version)], ir_version=9)


@pytest.mark.parametrize("case", [
    ("strings", "int64s", STRINGS, ["cat", "dog", "", "bird"], [1, 2, 3, 4], {}),
    ("strings", "floats", STRINGS, ["dog", "catt"], [0.5, -2.0], {"default_float": 9.0}),
    ("strings", "strings", STRINGS, ["cat", "bird"], ["x", "yy"], {"default_string": "?"}),
    ("int64s", "strings", INTS, [3, 7, 0], ["three", "seven", "zero"], {}),
    ("int64s", "int64s", INTS, [3, 12, 3], [30, 120, 99], {"default_int64": -5}),
    ("floats", "int64s", FLOATS, [0.5, float("nan"), 7.25], [1, 2, 3], {}),
    ("floats", "floats", FLOATS, [2.0, -1.0], [20.0, -10.0], {}),
], ids=["str-int", "str-float", "str-str", "int-str", "int-int-repeated-key", "float-nan",
        "float-float"])
def test_label_encoder(case, tmp_path):
    kin, vout, x, keys, values, extra = case
    types = {"strings": T.STRING, "int64s": T.INT64, "floats": T.FLOAT}
    node = h.make_node("LabelEncoder", ["X"], ["Y"], domain=ML, **{f"keys_{kin}": keys},
                       **{f"values_{vout}": values}, **extra)
    _agree_numpy_too(_model(node, types[kin], types[vout]), {"X": x}, tmp_path)


def test_label_encoder_default_tensor(tmp_path):
    node = h.make_node("LabelEncoder", ["X"], ["Y"], domain=ML,
                       keys_tensor=h.make_tensor("k", T.INT64, [2], [3, 7]),
                       values_tensor=h.make_tensor("v", T.INT64, [2], [30, 70]),
                       default_tensor=h.make_tensor("d", T.INT64, [1], [5]))
    _agree_numpy_too(_model(node, T.INT64, T.INT64), {"X": INTS}, tmp_path)


@pytest.mark.parametrize("x_type,x", [(T.INT64, INTS), (T.STRING, STRINGS)],
                         ids=["int-to-str", "str-to-int"])
def test_label_encoder_1(x_type, x, tmp_path):
    node = h.make_node("LabelEncoder", ["X"], ["Y"], domain=ML,
                       classes_strings=["zero", "cat", "", "three"], default_int64=-7,
                       default_string="none")
    y_type = T.INT64 if x_type == T.STRING else T.STRING
    _agree_numpy_too(_model(node, x_type, y_type, ml_version=1), {"X": x}, tmp_path)


@pytest.mark.parametrize("x_type,x,cats", [
    (T.INT64, INTS, {"cats_int64s": [0, 3, 7, 9]}),
    (T.FLOAT, np.array([[0.9, 3.0, -1.5], [7.7, 2.0, 3.2]], np.float32),
     {"cats_int64s": [0, 3, 7, -1]}),
    (T.STRING, STRINGS, {"cats_strings": ["dog", "cat", "", "fish"]}),
], ids=["int64", "float-truncated", "strings"])
def test_one_hot_encoder(x_type, x, cats, tmp_path):
    node = h.make_node("OneHotEncoder", ["X"], ["Y"], domain=ML, zeros=1, **cats)
    _agree(_model(node, x_type, T.FLOAT, ml_version=1), {"X": x}, tmp_path)


def test_one_hot_encoder_zeros_0_agrees_where_onnx_runtime_runs(tmp_path):
    node = h.make_node("OneHotEncoder", ["X"], ["Y"], domain=ML, zeros=0,
                       cats_int64s=[-1, 0, 3, 7, 12])
    m = _model(node, T.INT64, T.FLOAT, ml_version=1)
    _agree(m, {"X": INTS}, tmp_path)
    # an unlisted value: ONNX Runtime fails; OpenVINO has no op that raises
    with pytest.raises(Exception, match="ategor|not found|unknown"):
        _ort(m, {"X": INTS + 100})


def test_numeric_keys_for_strings_are_refused(tmp_path):
    node = h.make_node("LabelEncoder", ["X"], ["Y"], domain=ML, keys_int64s=[1],
                       values_int64s=[2], name="enc")
    m = _model(node, T.STRING, T.INT64)
    with pytest.raises(ig.UnsupportedError, match="LabelEncoder node 'enc'.*numeric keys"):
        ig.load(m).save(tmp_path / "m.xml")
