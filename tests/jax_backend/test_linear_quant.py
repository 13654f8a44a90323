"""QuantizeLinear and DequantizeLinear natively on both backends
(`backends.common.linear_quant`): per tensor, per axis and blocked, 8- and 16-bit, against
ONNX Runtime; and a model quantized by ONNX Runtime's own quantization tool (QDQ format)
runs as one XLA program with ONNX Runtime's outputs."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import itergraph as ig


def _ort(m, feeds):
    return ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)


def _both(m, feeds, rtol=1e-6, atol=1e-6):
    want = _ort(m, feeds)
    for backend in ("numpy", "jax"):
        model = ig.load(m)
        got = list(model.run(feeds, backend=backend).values())
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, backend
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                       atol=atol, err_msg=backend)
    assert all(r.compiles for r in model._jax.explain())


CASES = [  # (q type, scale shape, zero point?, axis, block_size, opset)
    (T.INT8, [], True, 1, 0, 13), (T.UINT8, [], False, 1, 0, 13),
    (T.INT8, [4], True, 1, 0, 13), (T.UINT8, [6], True, -1, 0, 13),
    (T.INT16, [4], True, 1, 0, 21), (T.UINT16, [], True, 1, 0, 21),
    (T.INT8, [2, 2, 6], True, 1, 2, 21), (T.UINT8, [2, 4, 3], True, 2, 2, 21),
]


@pytest.mark.parametrize("qtype,scale_shape,with_zp,axis,block,opset", CASES)
def test_quantize_then_dequantize(qtype, scale_shape, with_zp, axis, block, opset):
    rng = np.random.default_rng(0)
    np_q = onnx.helper.tensor_dtype_to_np_dtype(qtype)
    scale = (rng.random(scale_shape) * 0.05 + 0.01).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(scale, "s")]
    ins = ["x", "s"]
    if with_zp:
        info = np.iinfo(np_q)
        zp = rng.integers(info.min // 4, info.max // 4, scale_shape).astype(np_q)
        inits.append(onnx.numpy_helper.from_array(zp, "z"))
        ins.append("z")
    attrs = {"axis": axis} | ({"block_size": block} if block else {})
    g = h.make_graph([h.make_node("QuantizeLinear", ins, ["q"], **attrs),
                      h.make_node("DequantizeLinear", ["q", *ins[1:]], ["y"], **attrs)], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2, 4, 6])],
                     [h.make_tensor_value_info("q", qtype, None),
                      h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    x = (rng.standard_normal((2, 4, 6)) * 3).astype(np.float32)
    x[0, 0, :3] = [0.5 * scale.reshape(-1)[0], 1e6, -1e6]  # a tie and both saturations
    _both(m, {"x": x})


def test_a_model_quantized_by_onnxruntime_runs_compiled(tmp_path):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    rng = np.random.default_rng(1)
    w = onnx.numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    m2 = onnx.numpy_helper.from_array(rng.standard_normal((8 * 6 * 6, 5)).astype(np.float32),
                                      "m")
    shape = onnx.numpy_helper.from_array(np.array([1, -1], np.int64), "shape")
    g = h.make_graph([h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
                      h.make_node("Relu", ["c"], ["r"]),
                      h.make_node("Reshape", ["r", "shape"], ["f"]),
                      h.make_node("MatMul", ["f", "m"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 12, 12])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [w, m2, shape])
    src = tmp_path / "f32.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), src)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rng.standard_normal((1, 3, 12, 12)).astype(np.float32)}
                              for _ in range(4)])

        def get_next(self):
            return next(self.data, None)

    out = tmp_path / "qdq.onnx"
    quantize_static(str(src), str(out), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True)
    m = onnx.load(out)
    assert {n.op_type for n in m.graph.node} >= {"QuantizeLinear", "DequantizeLinear"}
    _both(m, {"x": rng.standard_normal((1, 3, 12, 12)).astype(np.float32)}, rtol=1e-4,
          atol=1e-4)
