"""The native NumPy kernels of Conv, Pad, AveragePool, GlobalAveragePool, GlobalMaxPool,
BatchNormalization, InstanceNormalization, LayerNormalization and CumSum against both
``onnx.reference`` and ONNX Runtime, on random inputs over grids of attributes; and every
opset version of those ops runs its native kernel, not the ``onnx.reference`` fallback.

Where an oracle cannot answer a case, the test asks it the equivalent question it can answer,
and says so at the place:

- ONNX Runtime has no float64 Conv, AveragePool, GlobalAveragePool, GlobalMaxPool or
  InstanceNormalization on CPU (its float32 result, at float32 tolerance), no Conv with
  ``auto_pad=SAME_*`` and dilations (the same padding as explicit ``pads``), no opset 1 Pad,
  AveragePool or opset 6 BatchNormalization (the node at opset 2 / 7 / 9), no
  LayerNormalization with ``stash_type=11`` (float32 statistics), and cannot insert its
  float16 casts into opset 1 models (global pools asked at opset 22).
- ``onnx.reference`` cannot pad by negative widths (the cropped input, padded by the positive
  ones), misplaces AveragePool windows when ``ceil_mode`` leaves two or more elements of room
  at the end (ONNX Runtime only), counts the padding of opset 1 AveragePool (opset 7), reduces
  the wrong axes in GlobalMaxPool but for 2-D (a MaxPool with the whole input as window),
  blends batch statistics into opset 7/9 BatchNormalization inference and has no training
  outputs there (its opset 15 node), ignores ``spatial=0`` (ORT and the formula), has no
  ``stash_type=11`` (its float64 computation) and gives LayerNormalization's ``Mean`` and
  ``InvStdDev`` the input's type (values compared).
"""
from __future__ import annotations

import itertools
import math
import zlib

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper as h
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

import itergraph as ig
from itergraph.backends.numpy.kernels import (
    KERNELS,
    default_factory,
    factory_for,
    load_all,
    set_default_factory,
)
from itergraph.ir.canonical import FORMS

F16, F32, F64 = np.float16, np.float32, np.float64
TOL = {F16: (2e-2, 2e-2), F32: (1e-4, 1e-5), F64: (1e-9, 1e-11)}

OPS = ["Conv", "Pad", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
       "BatchNormalization", "InstanceNormalization", "LayerNormalization", "CumSum"]


def _rng(*key) -> np.random.Generator:
    """A generator seeded by the test case (stable across runs and test orders)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


# ----------------------------------------------------------------------------- helpers


def _model(op, inputs: dict, n_out: int, opset: int, attrs: dict, inits=()) -> onnx.ModelProto:
    """A one-node model. `inputs` maps names to arrays (``None``: omitted optional input);
    the names in `inits` are initializers, the others graph inputs."""
    names = list(inputs)
    while names and inputs[names[-1]] is None:
        names.pop()
    node = h.make_node(op, [n if inputs[n] is not None else "" for n in names],
                       [f"y{i}" for i in range(n_out)], **attrs)
    graph_in = [h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(inputs[n].dtype),
                                         inputs[n].shape)
                for n in names if inputs[n] is not None and n not in inits]
    init = [numpy_helper.from_array(inputs[n], n) for n in inits]
    outs = [h.make_empty_tensor_value_info(f"y{i}") for i in range(n_out)]
    graph = h.make_graph([node], "g", graph_in, outs, init)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _feeds(m: onnx.ModelProto, inputs: dict) -> dict:
    return {vi.name: inputs[vi.name] for vi in m.graph.input}


def _ig(m, inputs) -> list:
    return list(ig.load(m).run(_feeds(m, inputs)).values())


def _ort(m, inputs) -> list:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, _feeds(m, inputs))


def _ref(m, inputs) -> list:
    return ReferenceEvaluator(m).run(None, _feeds(m, inputs))


def _same(got, want, who: str, tol=None, dtype: bool = True) -> None:
    """`got` equals `want`: shape, element type (unless `dtype` is False), values within
    `tol` (``(rtol, atol)``; by default after `want`'s type; integers exactly)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{who}: shape {got.shape} != {want.shape}"
    if dtype:
        assert got.dtype == want.dtype, f"{who}: dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=who)
        return
    rtol, atol = tol or TOL[want.dtype.type]
    np.testing.assert_allclose(got.astype(F64), want.astype(F64), rtol=rtol, atol=atol,
                               err_msg=who)


def _same_all(got: list, want: list, who: str, tol=None, dtype: bool = True) -> None:
    assert len(got) == len(want), f"{who}: {len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        _same(g, w, f"{who} output {i}", tol, dtype)


def _cast_inputs(inputs: dict, dtype) -> dict:
    return {k: (v.astype(dtype) if v is not None and v.dtype.kind == "f" else v)
            for k, v in inputs.items()}


# ----------------------------------------------------------------------------- Conv

CONV_GROUPS = [(1, 3, 4), (2, 4, 6), (4, 4, 4), (3, 3, 6)]  # (group, C, M): plain, grouped,
# depthwise, depthwise with two outputs per channel
CONV_PADS = ["none", "pads", "asym", "VALID", "SAME_UPPER", "SAME_LOWER"]
CONV_SIZES = {1: (11,), 2: (7, 8), 3: (5, 6, 5)}
CONV_STEPS = [(1, 1, 3), (2, 1, 2), (1, 2, 3), (2, 2, 2), (3, 1, 3)]  # (stride, dilation, k)


def _same_pads(size, k, s, d, mode) -> list[int]:
    """Explicit pads of ``auto_pad=SAME_*`` (the ONNX formula, written out for ORT)."""
    begin, end = [], []
    for i in size:
        total = max(0, (math.ceil(i / s) - 1) * s + (k - 1) * d + 1 - i)
        small, big = total // 2, total - total // 2
        begin.append(small if mode == "SAME_UPPER" else big)
        end.append(big if mode == "SAME_UPPER" else small)
    return begin + end


def _check_conv(dims, group, c, m, pad, s, d, k, bias, kshape_attr, dtype, opset, batch=2,
                inits=()):
    rng = _rng("conv", dims, group, c, m, pad, s, d, k, bias, dtype, opset, batch, inits)
    size = CONV_SIZES[dims]
    inputs = {"x": rng.standard_normal((batch, c, *size)).astype(dtype),
              "w": (rng.standard_normal((m, c // group, *[k] * dims)) * 0.5).astype(dtype),
              "b": rng.standard_normal(m).astype(dtype) if bias else None}
    attrs = dict(group=group, strides=[s] * dims, dilations=[d] * dims)
    if kshape_attr:
        attrs["kernel_shape"] = [k] * dims
    if pad == "pads":
        attrs["pads"] = [1] * (2 * dims)
    elif pad == "asym":
        attrs["pads"] = [0] * dims + [2] * dims
    elif pad != "none":
        attrs["auto_pad"] = pad
    model = _model("Conv", inputs, 1, opset, attrs, inits)
    got = _ig(model, inputs)
    who = f"Conv {dims}-D group={group} {pad} s={s} d={d} k={k} {np.dtype(dtype).name}"
    _same_all(got, _ref(model, inputs), who + " vs onnx.reference")
    ort_attrs, ort_inputs, tol = dict(attrs), inputs, None
    if pad.startswith("SAME") and d > 1:  # ORT refuses dilations with SAME_*
        del ort_attrs["auto_pad"]
        ort_attrs["pads"] = _same_pads(size, k, s, d, pad)
    if dtype == F64:  # ORT has no float64 Conv: its float32 result
        ort_inputs, tol = _cast_inputs(inputs, F32), (1e-4, 1e-4)
    want = _ort(_model("Conv", ort_inputs, 1, opset, ort_attrs, inits), ort_inputs)
    _same_all(got, want, who + " vs onnxruntime", tol, dtype=dtype != F64)
    return got


@pytest.mark.parametrize("pad", CONV_PADS)
@pytest.mark.parametrize("group,c,m", CONV_GROUPS)
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_conv_float32_grid(dims, group, c, m, pad):
    for j, (s, d, k) in enumerate(CONV_STEPS):
        _check_conv(dims, group, c, m, pad, s, d, k, bias=j % 2 == 0, kshape_attr=j < 3,
                    dtype=F32, opset=(11, 22)[j % 2])


@pytest.mark.parametrize("dtype", [F16, F64])
@pytest.mark.parametrize("pad", ["pads", "asym", "SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("group,c,m", CONV_GROUPS)
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_conv_float16_and_float64(dims, group, c, m, pad, dtype):
    for j, (s, d, k) in enumerate(CONV_STEPS[:4]):
        y = _check_conv(dims, group, c, m, pad, s, d, k, bias=j % 2 == 1, kshape_attr=j == 0,
                        dtype=dtype, opset=(11, 22)[j % 2])
        assert y[0].dtype == dtype


BATCH_ONE = [  # (x shape, w shape, attrs, bias): the shapes of silero VAD's STFT and encoder
    ((1, 1, 640), (258, 1, 256), dict(strides=[128]), False),
    ((1, 129, 4), (128, 129, 3), dict(pads=[1, 1]), True),
    ((1, 64, 8), (64, 1, 5), dict(pads=[2, 2], group=64), True),
    ((1, 3, 17, 15), (8, 3, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER"), True),
    # PP-OCR's late depthwise layers: more channels than columns (run channels last), and a
    # 5x5 kernel over 2 rows (the taps on padding rows only are left out)
    ((1, 200, 2, 96), (200, 1, 5, 5), dict(pads=[2, 2, 2, 2], group=200), True),
    ((1, 88, 3, 9), (88, 1, 5, 5), dict(pads=[2, 2, 2, 2], group=88, strides=[2, 1]), False),
    ((1, 64, 7, 7), (64, 1, 3, 3), dict(pads=[1, 1, 1, 1], group=64, strides=[2, 2]), True),
    ((1, 24, 1, 6), (24, 1, 5, 5), dict(pads=[2, 2, 2, 1], group=24, dilations=[1, 2]), True),
]


@pytest.mark.parametrize("weights", ["inputs", "initializers"])
@pytest.mark.parametrize("dtype", [F32, F16])
@pytest.mark.parametrize("case", range(len(BATCH_ONE)))
def test_conv_batch_one(case, dtype, weights):
    """Batch 1 (the shapes of real streaming models), with the weights as inputs and as
    initializers (prepared once when the graph is compiled)."""
    x_shape, w_shape, attrs, bias = BATCH_ONE[case]
    rng = _rng("conv1", case, dtype, weights)
    inputs = {"x": rng.standard_normal(x_shape).astype(dtype),
              "w": (rng.standard_normal(w_shape) / math.sqrt(math.prod(w_shape[1:])))
              .astype(dtype),
              "b": rng.standard_normal(w_shape[0]).astype(dtype) if bias else None}
    inits = () if weights == "inputs" else ("w", "b") if bias else ("w",)
    model = _model("Conv", inputs, 1, 22, attrs, inits)
    sess = ig.load(model)
    for _ in range(2):  # the second run reuses the kept geometry
        inputs["x"] = rng.standard_normal(x_shape).astype(dtype)
        got = list(sess.run(_feeds(model, inputs)).values())
        _same_all(got, _ref(model, inputs), "Conv batch 1 vs onnx.reference")
        _same_all(got, _ort(model, inputs), "Conv batch 1 vs onnxruntime")


@pytest.mark.parametrize("value", [np.inf, np.nan])
def test_depthwise_conv_non_finite_weight_on_padding(value):
    """A weight tap that reads only padding still multiplies zeros by it (inf * 0 is NaN,
    as onnx.reference computes; ORT's depthwise kernel skips those products and gives finite
    values). Finite weights skip the tap, with the same result."""
    c = 4
    w = np.ones((c, 1, 5, 5), F32)
    w[:, :, 0, :] = value
    inputs = {"x": np.ones((1, c, 2, 6), F32), "w": w}
    model = _model("Conv", inputs, 1, 17, dict(group=c, pads=[2, 2, 2, 2]), ("w",))
    got = list(ig.load(model).run(_feeds(model, inputs), backend="numpy").values())
    assert np.isnan(got[0]).all()
    _same_all(got, _ref(model, inputs), "depthwise Conv, non-finite weights vs onnx.reference")


def test_conv_rejects_mismatched_channels():
    inputs = {"x": np.ones((1, 4, 5), F32), "w": np.ones((2, 3, 2), F32)}
    with pytest.raises(ig.ExecutionError, match="channels"):
        _ig(_model("Conv", inputs, 1, 22, {}), inputs)


# ----------------------------------------------------------------------------- Pad

PAD_CASES = [  # (shape, pads, axes)
    ((3, 4), [1, 2, 2, 1], None),
    ((2, 3, 4), [0, 1, 2, 0, 2, 1], None),
    ((2, 5), [0, -1, 0, 2], None),  # crop the front of axis 1, pad its end
    ((3, 6), [-1, 2, 1, -2], None),  # crop and pad on both axes
    ((4, 5), [-2, -1, 0, 0], None),  # crop only
    ((2, 3, 4), [0, 0, 0, 0, 0, 0], None),
    ((2, 3, 4), [1, 2, 0, 3], [0, 2]),
    ((2, 3, 4), [2, -1, 1, 0], [-1, 1]),  # negative axes, a crop
]
PAD_MODES = ["constant", "reflect", "edge", "wrap"]
PAD_GRID = [(opset, mode, case, dtype) for opset in (2, 11, 18, 19) for mode in PAD_MODES
            for case in range(len(PAD_CASES)) for dtype in (F32, np.int64)
            if (mode != "wrap" or opset >= 19) and (PAD_CASES[case][2] is None or opset >= 18)
            and (dtype == F32 or opset >= 11)]  # Pad-2 is for floating types only


def _pad_model(x, pads, axes, mode, value, opset):
    if opset < 11:
        attrs = dict(mode=mode, pads=pads)
        if value is not None:
            attrs["value"] = float(value)
        return _model("Pad", {"x": x}, 1, opset, attrs), {"x": x}
    inputs = {"x": x, "p": np.array(pads, np.int64),
              "v": None if value is None else np.array(value, x.dtype),
              "a": None if axes is None else np.array(axes, np.int64)}
    return _model("Pad", inputs, 1, opset, dict(mode=mode)), inputs


def _crop(x, pads, axes):
    """(x cropped by the negative widths, the widths with the negative ones zeroed)."""
    axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in axes]
    k = len(axes)
    index = [slice(None)] * x.ndim
    for a, b, e in zip(axes, pads[:k], pads[k:]):
        index[a] = slice(max(0, -b), x.shape[a] - max(0, -e))
    return x[tuple(index)], [max(0, p) for p in pads]


@pytest.mark.parametrize("opset,mode,case,dtype", PAD_GRID)
def test_pad_grid(opset, mode, case, dtype):
    shape, pads, axes = PAD_CASES[case]
    rng = _rng("pad", opset, mode, case, dtype)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    value = None if case % 2 else (2.5 if dtype == F32 else 7)
    model, inputs = _pad_model(x, pads, axes, mode, value, opset)
    got = _ig(model, inputs)
    who = f"Pad-{opset} {mode} {pads} axes={axes}"
    _same_all(got, _ort(model, inputs), who + " vs onnxruntime")
    if any(p < 0 for p in pads):  # onnx.reference pads by np.pad: no negative widths
        cropped, positive = _crop(x, pads, axes)
        model, inputs = _pad_model(cropped, positive, axes, mode, value, opset)
    _same_all(got, _ref(model, inputs), who + " vs onnx.reference")
    if axes is None:
        k = len(shape)
        assert got[0].shape == tuple(d + pads[i] + pads[k + i] for i, d in enumerate(shape))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_opset_1_paddings_attribute(mode):
    """Opset 1 names the widths ``paddings``; ORT has no opset 1 Pad: its opset 2 node."""
    x = _rng("pad1", mode).standard_normal((3, 4)).astype(F32)
    attrs = dict(mode=mode, paddings=[1, 2, 2, 1], value=-3.0)
    m1 = _model("Pad", {"x": x}, 1, 1, attrs)
    got = _ig(m1, {"x": x})
    _same_all(got, _ref(m1, {"x": x}), "Pad-1 vs onnx.reference")
    attrs["pads"] = attrs.pop("paddings")
    _same_all(got, _ort(_model("Pad", {"x": x}, 1, 2, attrs), {"x": x}), "Pad-1 vs ORT Pad-2")


@pytest.mark.parametrize("mode", PAD_MODES)
@pytest.mark.parametrize("dtype", [F16, np.int8, np.bool_, np.uint8])
def test_pad_other_types(dtype, mode):
    x = (_rng("padt", dtype, mode).standard_normal((2, 3, 4)) * 5).astype(dtype)
    value = None if dtype == np.bool_ else 1
    model, inputs = _pad_model(x, [0, 2, 1, 1, 0, 2], None, mode, value, 19)
    got = _ig(model, inputs)
    _same_all(got, _ort(model, inputs), f"Pad {np.dtype(dtype).name} vs onnxruntime")
    _same_all(got, _ref(model, inputs), f"Pad {np.dtype(dtype).name} vs onnx.reference")


def test_pad_by_initializer_widths_reuses_the_geometry():
    x = np.arange(12, dtype=F32).reshape(3, 4)
    inputs = {"x": x, "p": np.array([0, 1, 2, -1], np.int64), "v": np.array(9, F32)}
    model = _model("Pad", inputs, 1, 19, dict(mode="constant"), inits=("p", "v"))
    sess = ig.load(model)
    want = np.full((5, 4), 9, F32)
    want[:3, 1:] = x[:, :3]
    for _ in range(2):
        np.testing.assert_array_equal(sess.run({"x": x})["y0"], want)
    _same_all(_ig(model, inputs), _ort(model, inputs), "Pad initializer widths vs ORT")


def test_pad_removing_more_than_the_axis_fails():
    inputs = {"x": np.ones((2, 3), F32), "p": np.array([0, -2, 0, -2], np.int64)}
    with pytest.raises(ig.ExecutionError, match="remove more than"):
        _ig(_model("Pad", inputs, 1, 19, {}), inputs)


# ----------------------------------------------------------------------------- AveragePool

AVG_CASES = [  # (shape, attrs); strides <= 2 (see test_average_pool_ceil_mode_stride_3)
    ((2, 3, 9), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    ((2, 2, 10), dict(kernel_shape=[4], strides=[2], pads=[0, 2])),
    ((1, 2, 7, 8), dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1])),
    ((1, 2, 6, 7), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((1, 2, 8, 7), dict(kernel_shape=[3, 3], strides=[2, 2], dilations=[2, 1],
                        pads=[2, 1, 1, 1])),
    ((1, 1, 5, 6, 7), dict(kernel_shape=[2, 3, 2], strides=[1, 2, 2], pads=[1, 1, 0, 0, 1, 1])),
    ((1, 2, 5, 6, 5), dict(kernel_shape=[2, 2, 2], dilations=[2, 1, 2], pads=[1, 0, 1, 1, 1, 0])),
    ((1, 3, 9, 8), dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")),
    ((1, 3, 9, 8), dict(kernel_shape=[2, 3], strides=[2, 3], auto_pad="SAME_LOWER")),
    ((1, 3, 9, 8), dict(kernel_shape=[3, 2], strides=[2, 2], auto_pad="VALID")),
]
AVG_GRID = [(case, ceil, include) for case in range(len(AVG_CASES)) for ceil in (0, 1)
            for include in (0, 1) if not (ceil and "auto_pad" in AVG_CASES[case][1])]


def _check_avg(shape, attrs, dtype, opset, ref=True):
    x = _rng("avg", shape, str(attrs), dtype, opset).standard_normal(shape).astype(dtype)
    model = _model("AveragePool", {"x": x}, 1, opset, attrs)
    got = _ig(model, {"x": x})
    who = f"AveragePool-{opset} {shape} {attrs} {np.dtype(dtype).name}"
    if ref:
        _same_all(got, _ref(model, {"x": x}), who + " vs onnx.reference")
    if dtype == F64:  # no float64 AveragePool in ORT: its float32 result
        x32 = {"x": x.astype(F32)}
        want = _ort(_model("AveragePool", x32, 1, opset, attrs), x32)
        _same_all(got, want, who + " vs onnxruntime", (1e-5, 1e-6), dtype=False)
    else:
        _same_all(got, _ort(model, {"x": x}), who + " vs onnxruntime")
    return got


@pytest.mark.parametrize("dtype", [F32, F16, F64])
@pytest.mark.parametrize("case,ceil,include", AVG_GRID)
def test_average_pool_grid(case, ceil, include, dtype):
    shape, attrs = AVG_CASES[case]
    _check_avg(shape, dict(attrs, ceil_mode=ceil, count_include_pad=include), dtype, 19)


@pytest.mark.parametrize("opset", [1, 7, 10, 11, 22])
def test_average_pool_opsets(opset):
    attrs = dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1])
    if opset >= 7:
        attrs["count_include_pad"] = 1
    if opset >= 10:
        attrs["ceil_mode"] = 1
    # opset 1 (no count_include_pad: padding never counted): ORT has no opset 1 AveragePool
    # and onnx.reference counts the padding there; both asked the same node at opset 7
    other = max(opset, 7)
    x = _rng("avgv", opset).standard_normal((1, 2, 7, 8)).astype(F32)
    got = _ig(_model("AveragePool", {"x": x}, 1, opset, attrs), {"x": x})
    m = _model("AveragePool", {"x": x}, 1, other, attrs)
    _same_all(got, _ref(m, {"x": x}), f"AveragePool-{opset} vs onnx.reference")
    want = _ort(m, {"x": x})
    _same_all(got, want, f"AveragePool-{opset} vs onnxruntime")


@pytest.mark.parametrize("include", [0, 1])
@pytest.mark.parametrize("shape,attrs", [
    ((1, 2, 7), dict(kernel_shape=[2], strides=[3])),
    ((1, 2, 6, 5), dict(kernel_shape=[3, 3], strides=[3, 3], pads=[1, 0, 0, 1])),
    ((1, 1, 8), dict(kernel_shape=[3], strides=[3], dilations=[2], pads=[1, 0])),
])
def test_average_pool_ceil_mode_stride_3(shape, attrs, include):
    """ceil_mode with room for two or more extra elements at the end: ``onnx.reference``
    puts half of that room at the beginning (shifting every window), so ONNX Runtime only."""
    attrs = dict(attrs, ceil_mode=1, count_include_pad=include)
    got = _check_avg(shape, attrs, F32, 19, ref=False)
    floor = _ig(_model("AveragePool", {"x": np.ones(shape, F32)}, 1, 19,
                       dict(attrs, ceil_mode=0)), {"x": np.ones(shape, F32)})
    assert got[0].shape[2:] > floor[0].shape[2:]  # ceil_mode added a window


# ----------------------------------------------------------------------------- Global pools


@pytest.mark.parametrize("dtype", [F32, F16, F64])
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pools(op, dims, dtype):
    """ORT is asked at opset 22 (at opset 1 it cannot insert its float16 casts) and has no
    float64 (its float32 result); ``onnx.reference``'s GlobalMaxPool reduces the wrong axes
    but for 2-D: a MaxPool whose window is the whole input instead."""
    shape = (2, 3, *[5, 4, 3][:dims])
    x = (_rng(op, dims, dtype).standard_normal(shape) + 1).astype(dtype)
    ort_x = {"x": x.astype(F32) if dtype == F64 else x}
    want = _ort(_model(op, ort_x, 1, 22, {}), ort_x)
    for opset in (1, 22):
        model = _model(op, {"x": x}, 1, opset, {})
        got = _ig(model, {"x": x})
        assert got[0].shape == (2, 3) + (1,) * dims
        ref_model = model
        if op == "GlobalMaxPool" and dims != 2:
            ref_model = _model("MaxPool", {"x": x}, 1, 12, dict(kernel_shape=shape[2:]))
        _same_all(got, _ref(ref_model, {"x": x}), f"{op}-{opset} vs onnx.reference")
        tol = (1e-5, 1e-6) if dtype == F64 else None
        _same_all(got, want, f"{op}-{opset} vs onnxruntime", tol, dtype=dtype != F64)


# ----------------------------------------------------------------------------- BatchNorm


def _bn_inputs(shape, dtype, key, param_dtype=None):
    rng = _rng("bn", shape, dtype, key)
    c = shape[1]
    pd = param_dtype or dtype
    return {"x": (rng.standard_normal(shape) * 2 + 0.5).astype(dtype),
            "s": rng.standard_normal(c).astype(pd), "b": rng.standard_normal(c).astype(pd),
            "m": rng.standard_normal(c).astype(pd), "v": (rng.random(c) + 0.5).astype(pd)}


@pytest.mark.parametrize("consts", [False, True])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("dtype", [F32, F64, F16])
@pytest.mark.parametrize("opset", [7, 9, 14, 15])
def test_batch_norm_inference(opset, dtype, shape, consts):
    inputs = _bn_inputs(shape, dtype, (opset, consts))
    attrs = dict(epsilon=1e-3)
    inits = ("s", "b", "m", "v") if consts else ()
    model = _model("BatchNormalization", inputs, 1, opset, attrs, inits)
    got = _ig(model, inputs)
    who = f"BatchNormalization-{opset} {shape} {np.dtype(dtype).name}"
    _same_all(got, _ort(model, inputs), who + " vs onnxruntime")
    # onnx.reference's opset 7/9 kernel blends in batch statistics: its opset 15 node
    ref_model = model if opset >= 14 else _model("BatchNormalization", inputs, 1, 15, attrs,
                                                 inits)
    _same_all(got, _ref(ref_model, inputs), who + " vs onnx.reference")


def test_batch_norm_float16_input_float32_parameters():
    """Opset 15: scale/B and mean/var may have another type than X."""
    inputs = _bn_inputs((2, 3, 4), F16, "mixed", param_dtype=F32)
    model = _model("BatchNormalization", inputs, 1, 15, {})
    got = _ig(model, inputs)
    _same_all(got, _ort(model, inputs), "BatchNormalization mixed types vs onnxruntime")
    _same_all(got, _ref(model, inputs), "BatchNormalization mixed types vs onnx.reference")


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("opset", [14, 15])
def test_batch_norm_training_mode(opset, dtype, shape):
    inputs = _bn_inputs(shape, dtype, "train")
    model = _model("BatchNormalization", inputs, 3, opset, dict(training_mode=1, momentum=0.8))
    got = _ig(model, inputs)
    who = f"BatchNormalization-{opset} training {shape}"
    _same_all(got, _ref(model, inputs), who + " vs onnx.reference")
    _same_all(got, _ort(model, inputs), who + " vs onnxruntime")
    axes = tuple(i for i in range(len(shape)) if i != 1)
    assert np.abs(got[0].mean(axis=axes) - inputs["b"]).max() < 1e-4  # batch statistics used


@pytest.mark.parametrize("opset", [7, 9])
def test_batch_norm_training_outputs_before_opset_14(opset):
    """Five outputs: training; saved_var is ``1 / sqrt(var + epsilon)`` as in ORT. Y and the
    running statistics equal ``onnx.reference``'s opset 15 training mode."""
    inputs = _bn_inputs((2, 3, 4, 2), F32, opset)
    model = _model("BatchNormalization", inputs, 5, opset, dict(epsilon=1e-4))
    got = _ig(model, inputs)
    _same_all(got, _ort(model, inputs), f"BatchNormalization-{opset} training vs onnxruntime")
    m15 = _model("BatchNormalization", inputs, 3, 15, dict(epsilon=1e-4, training_mode=1))
    _same_all(got[:3], _ref(m15, inputs), f"BatchNormalization-{opset} vs onnx.reference-15")
    x = inputs["x"].astype(F64)
    np.testing.assert_allclose(got[3], x.mean(axis=(0, 2, 3)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[4], 1 / np.sqrt(x.var(axis=(0, 2, 3)) + 1e-4), rtol=1e-5)


def test_batch_norm_opset_6_is_test():
    """Opset 6 (``is_test=1``): ORT has none, so the opset 7 node."""
    inputs = _bn_inputs((2, 3, 4), F32, "v6")
    m6 = _model("BatchNormalization", inputs, 1, 6, dict(is_test=1, epsilon=1e-4))
    got = _ig(m6, inputs)
    _same_all(got, _ref(m6, inputs), "BatchNormalization-6 vs onnx.reference")
    m7 = _model("BatchNormalization", inputs, 1, 7, dict(epsilon=1e-4))
    _same_all(got, _ort(m7, inputs), "BatchNormalization-6 vs ORT BatchNormalization-7")


def test_batch_norm_opset_6_is_test_0_normalizes_by_the_batch():
    """Opset 6 with ``is_test=0``: training mode, whatever the number of outputs; without
    ``is_test``: the number of outputs decides (one: inference). ORT's opset 9 node with five
    outputs (training) and with one (inference)."""
    inputs = _bn_inputs((2, 3, 4), F32, "v6-train")
    train = _ig(_model("BatchNormalization", inputs, 1, 6, dict(is_test=0)), inputs)
    want = _ort(_model("BatchNormalization", inputs, 5, 9, {}), inputs)
    _same(train[0], want[0], "BatchNormalization-6 is_test=0 vs ORT-9 training")
    infer = _ig(_model("BatchNormalization", inputs, 1, 6, {}), inputs)
    _same_all(infer, _ort(_model("BatchNormalization", inputs, 1, 9, {}), inputs),
              "BatchNormalization-6 vs ORT-9 inference")
    assert np.abs(train[0] - infer[0]).max() > 0.1


def test_batch_norm_opset_7_not_spatial():
    """``spatial=0``: parameters per element of ``[C, D1]`` (``onnx.reference`` ignores the
    attribute and fails on such parameters: ORT and the formula)."""
    rng = _rng("bn-spatial")
    x = rng.standard_normal((2, 3, 4)).astype(F32)
    s, b, m = (rng.standard_normal((3, 4)).astype(F32) for _ in range(3))
    v = (rng.random((3, 4)) + 0.5).astype(F32)
    inputs = {"x": x, "s": s, "b": b, "m": m, "v": v}
    model = _model("BatchNormalization", inputs, 1, 7, dict(spatial=0, epsilon=1e-3))
    got = _ig(model, inputs)
    _same_all(got, _ort(model, inputs), "BatchNormalization spatial=0 vs onnxruntime")
    _same(got[0], (x - m) / np.sqrt(v + 1e-3) * s + b, "BatchNormalization spatial=0")


# ----------------------------------------------------------------------------- InstanceNorm


@pytest.mark.parametrize("eps", [1e-5, 0.1])
@pytest.mark.parametrize("dtype", [F32, F16, F64])
@pytest.mark.parametrize("shape", [(2, 3, 7), (1, 4, 5, 6), (2, 2, 3, 4, 5)])
def test_instance_norm(shape, dtype, eps):
    rng = _rng("in", shape, dtype, eps)
    c = shape[1]
    inputs = {"x": (rng.standard_normal(shape) * 3 + 1).astype(dtype),
              "s": rng.standard_normal(c).astype(dtype), "b": rng.standard_normal(c).astype(dtype)}
    for opset in (6, 22):
        model = _model("InstanceNormalization", inputs, 1, opset, dict(epsilon=eps))
        got = _ig(model, inputs)
        who = f"InstanceNormalization-{opset} {shape} {np.dtype(dtype).name}"
        _same_all(got, _ref(model, inputs), who + " vs onnx.reference")
        if dtype == F64:  # not in ORT: its float32 result
            f32 = _cast_inputs(inputs, F32)
            want = _ort(_model("InstanceNormalization", f32, 1, opset, dict(epsilon=eps)), f32)
            _same_all(got, want, who + " vs onnxruntime", (1e-4, 1e-5), dtype=False)
        else:
            _same_all(got, _ort(model, inputs), who + " vs onnxruntime")


# ----------------------------------------------------------------------------- LayerNorm

LN_CASES = [((4, 6), -1), ((4, 6), 0), ((2, 3, 5), 1), ((2, 3, 5), -1), ((2, 3, 4, 5), -2),
            ((2, 3, 4, 5), 0), ((3, 1, 7), 2)]


@pytest.mark.parametrize("dtype", [F32, F16, F64])
@pytest.mark.parametrize("n_out", [1, 3])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape,axis", LN_CASES)
def test_layer_norm(shape, axis, bias, n_out, dtype):
    rng = _rng("ln", shape, axis, bias, n_out, dtype)
    norm_shape = shape[axis % len(shape):]
    inputs = {"x": (rng.standard_normal(shape) * 2 + 1).astype(dtype),
              "s": rng.standard_normal(norm_shape).astype(dtype),
              "b": rng.standard_normal(norm_shape).astype(dtype) if bias else None}
    model = _model("LayerNormalization", inputs, n_out, 17, dict(axis=axis, epsilon=1e-3))
    got = _ig(model, inputs)
    who = f"LayerNormalization {shape} axis={axis} {np.dtype(dtype).name}"
    want = _ort(model, inputs)
    _same_all(got, want, who + " vs onnxruntime")
    if n_out == 3:  # the statistics in the stash type (float32), the leading axes kept
        stat = shape[:axis % len(shape)] + (1,) * len(norm_shape)
        assert got[1].dtype == got[2].dtype == F32 and got[1].shape == got[2].shape == stat
    ref = _ref(model, inputs)  # onnx.reference: statistics of X's type
    _same(got[0], ref[0], who + " vs onnx.reference")
    tol = TOL[F16] if dtype == F16 else TOL[F32]
    for g, r in zip(got[1:], ref[1:]):
        _same(g, r, who + " statistics vs onnx.reference", tol, dtype=False)


def test_layer_norm_broadcast_scale_and_stash_type_double():
    rng = _rng("ln-stash")
    inputs = {"x": rng.standard_normal((2, 3, 4)), "s": rng.standard_normal((1, 4)),
              "b": rng.standard_normal(4)}
    model = _model("LayerNormalization", inputs, 3, 17, dict(axis=-2, stash_type=11))
    got = _ig(model, inputs)
    assert [g.dtype for g in got] == [F64, F64, F64]
    # onnx.reference and ORT have no stash_type=11: the float64 / float32 statistics
    ref = _ref(_model("LayerNormalization", inputs, 3, 17, dict(axis=-2)), inputs)
    _same_all(got, ref, "LayerNormalization stash_type=11 vs onnx.reference")
    want = _ort(_model("LayerNormalization", inputs, 3, 17, dict(axis=-2)), inputs)
    _same_all(got, want, "LayerNormalization stash_type=11 vs onnxruntime", (1e-5, 1e-6),
              dtype=False)


# ----------------------------------------------------------------------------- CumSum

CUMSUM_CASES = [((7,), 0), ((7,), -1), ((3, 4), 0), ((3, 4), 1), ((3, 4), -2),
                ((2, 3, 4), 1), ((2, 3, 4), -1)]


@pytest.mark.parametrize("dtype", [F32, F64, np.int32, np.int64])
@pytest.mark.parametrize("exclusive,reverse", list(itertools.product((0, 1), (0, 1))))
@pytest.mark.parametrize("shape,axis", CUMSUM_CASES)
def test_cumsum(shape, axis, exclusive, reverse, dtype):
    rng = _rng("cumsum", shape, axis, exclusive, reverse, dtype)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    for opset, axis_type in ((11, np.int64), (14, np.int32)):
        inputs = {"x": x, "a": np.array(axis, axis_type)}
        model = _model("CumSum", inputs, 1, opset, dict(exclusive=exclusive, reverse=reverse))
        got = _ig(model, inputs)
        who = f"CumSum-{opset} {shape} axis={axis} ex={exclusive} rev={reverse}"
        _same_all(got, _ref(model, inputs), who + " vs onnx.reference")
        _same_all(got, _ort(model, inputs), who + " vs onnxruntime")


@pytest.mark.parametrize("exclusive,reverse", list(itertools.product((0, 1), (0, 1))))
def test_cumsum_float16_and_axis_tensor(exclusive, reverse):
    x = _rng("cs16", exclusive, reverse).standard_normal((3, 5)).astype(F16)
    inputs = {"x": x, "a": np.array([1], np.int64)}  # a one-element 1-D axis
    model = _model("CumSum", inputs, 1, 14, dict(exclusive=exclusive, reverse=reverse))
    got = _ig(model, inputs)
    _same_all(got, _ort(model, inputs), "CumSum float16 vs onnxruntime")
    ref_in = dict(inputs, a=np.array(1, np.int64))  # onnx.reference wants a 0-d axis
    _same_all(got, _ref(_model("CumSum", ref_in, 1, 14, dict(exclusive=exclusive,
                                                              reverse=reverse)), ref_in),
              "CumSum float16 vs onnx.reference")


# ----------------------------------------------------------------------------- registration


def _spec_versions(op: str) -> list[int]:
    return sorted({s.since_version for s in onnx.defs.get_all_schemas_with_history()
                   if s.name == op and s.domain == ""})


def _read_as_newer(op: str, version: int) -> bool:
    """An older form `ir.canonical` rewrites when a model is read: no kernel meets it."""
    return op in FORMS and version < FORMS[op].since


VERSIONS = [(op, v) for op in OPS for v in _spec_versions(op) if not _read_as_newer(op, v)]


def test_every_op_has_its_spec_versions_listed():
    assert {op for op, _ in VERSIONS} == set(OPS)
    assert ("Pad", 11) in VERSIONS and ("Pad", 19) in VERSIONS and ("Conv", 22) in VERSIONS
    assert ("Pad", 2) not in VERSIONS  # read as Pad-11 (tests/ir/test_canonical.py)


@pytest.mark.parametrize("op,version", VERSIONS)
def test_every_version_has_a_native_kernel(op, version):
    load_all()
    factory = KERNELS.lookup(op, version, "")
    assert factory is not None, f"{op}-{version} has no native kernel"
    assert factory.__module__.startswith("itergraph.backends.numpy.kernels."), factory
    assert factory_for(op, version, "") is factory  # not the onnx.reference default


def test_a_model_of_these_ops_runs_without_the_onnx_reference_fallback():
    """With no default factory for the ONNX domain, only native kernels can run the model."""
    rng = _rng("chain")
    c = 4
    inits = {"w": (rng.standard_normal((c, c, 3)) * 0.3).astype(F32),
             "p": np.array([0, 0, 2, 0, 0, 1], np.int64),
             "s": rng.standard_normal(c).astype(F32), "bb": rng.standard_normal(c).astype(F32),
             "mm": rng.standard_normal(c).astype(F32),
             "vv": (rng.random(c) + 0.5).astype(F32),
             "ls": rng.standard_normal(9).astype(F32), "ax": np.array(2, np.int64)}
    nodes = [h.make_node("Pad", ["x", "p"], ["t1"], mode="reflect"),
             h.make_node("Conv", ["t1", "w"], ["t2"], pads=[1, 1]),
             h.make_node("BatchNormalization", ["t2", "s", "bb", "mm", "vv"], ["t3"]),
             h.make_node("InstanceNormalization", ["t3", "s", "bb"], ["t4"]),
             h.make_node("AveragePool", ["t4"], ["t5"], kernel_shape=[2], pads=[0, 1]),
             h.make_node("LayerNormalization", ["t5", "ls"], ["t6"]),
             h.make_node("CumSum", ["t6", "ax"], ["t7"], exclusive=1),
             h.make_node("GlobalAveragePool", ["t7"], ["ga"]),
             h.make_node("GlobalMaxPool", ["t7"], ["gm"])]
    graph = h.make_graph(nodes, "chain", [h.make_tensor_value_info("x", 1, [2, c, 6])],
                         [h.make_empty_tensor_value_info("ga"),
                          h.make_empty_tensor_value_info("gm")],
                         [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])
    model.ir_version = 8
    x = rng.standard_normal((2, c, 6)).astype(F32)
    want = _ort(model, {"x": x})
    default = default_factory("")
    assert default is not None and factory_for("Hardmax", 13) is default  # no native kernel
    set_default_factory(None, [""])
    try:
        got = list(ig.load(model).run({"x": x}).values())
    finally:
        set_default_factory(default, [""])
    _same_all(got, want, "chain of native kernels vs onnxruntime")
