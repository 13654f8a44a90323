"""Constants of every element type, IR v10, and the public API on OpenVINO files."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops
from ov_helpers import check_model, run_ov, save

import itergraph as ig
from itergraph.frontends.openvino import read, write
from itergraph.ir import verify

VALUES = [0, 1, -2, 3, 7, -8, 5, 1, 0]


@pytest.mark.parametrize("name", ["boolean", "f16", "bf16", "f32", "f64", "i4", "i8", "i16",
                                  "i32", "i64", "u1", "u4", "u8", "u16", "u32", "u64"])
def test_constant_of_each_element_type(tmp_path, name):
    t = getattr(ov.Type, name)
    vals = np.array(VALUES)
    if name.startswith("u"):
        vals = np.abs(vals) % (2 if name == "u1" else 16)
    if name == "boolean":
        vals = vals != 0
    if name in ("i4", "u4", "u1"):  # packed: build the bytes the way OpenVINO stores them
        c = _packed_const(name, vals)
    else:
        tensor = ov.Tensor(t, ov.Shape([len(vals)]))
        if name == "bf16":  # the NumPy view of a bf16 tensor is float16-typed raw storage
            raw = vals.astype(ml_dtypes.bfloat16).view(np.uint16)
            tensor.data.view(np.uint16)[:] = raw
        else:
            tensor.data[:] = vals.astype(tensor.data.dtype)
        c = ops.constant(tensor)
    p = ops.parameter([1], np.float32, name="p")
    m = ov.Model([ops.result(ops.add(ops.convert(c, "f32"), p))], [p], "consts")
    g, want = check_model(m, {"p": np.zeros(1, np.float32)}, tmp_path, write_back=False)
    np.testing.assert_array_equal(want[0], vals.astype(np.float32))
    if name not in ("u1",):  # u1 reads as unpacked uint8
        out = tmp_path / "w.xml"
        write(g, out)
        np.testing.assert_array_equal(run_ov(out, {"p": np.zeros(1, np.float32)})[0], want[0])


def _packed_const(name, vals):
    bits = {"u1": 1, "u4": 4, "i4": 4}[name]
    if bits == 1:
        data = np.packbits(vals.astype(np.uint8), bitorder="big")
    else:
        nib = (vals.astype(np.int16) & 15).astype(np.uint8)
        nib = np.concatenate([nib, np.zeros(len(nib) % 2, np.uint8)]).reshape(-1, 2)
        data = (nib[:, 0] | (nib[:, 1] << 4)).astype(np.uint8)
    t = getattr(ov.Type, name)
    tensor = ov.Tensor(t, ov.Shape([len(vals)]))
    tensor.data.view(np.uint8).reshape(-1)[:] = data
    return ops.constant(tensor)


def test_ir_v10_file(tmp_path):
    x = ops.parameter([2, 3], np.float32, name="x")
    m = ov.Model([ops.result(ops.relu(ops.multiply(x, ops.constant(np.float32(-2)))))], [x])
    ov.serialize(m, str(tmp_path / "v10.xml"), str(tmp_path / "v10.bin"), version="IR_V10")
    assert 'version="10"' in (tmp_path / "v10.xml").read_text()
    g = read(tmp_path / "v10.xml")
    verify(g)
    xv = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    (want,) = run_ov(tmp_path / "v10.xml", {"x": xv})
    (got,) = ig.load(str(tmp_path / "v10.xml")).run({"x": xv}).values()
    np.testing.assert_allclose(got, want)


def test_public_api_load_and_save(tmp_path):
    X = ops.parameter([4, 2], np.float32, name="X")
    H = ops.parameter([2], np.float32, name="H")
    xi = ops.parameter([1, 2], np.float32, name="xi")
    hi = ops.parameter([2], np.float32, name="hi")
    h2 = ops.tanh(ops.add(hi, ops.squeeze(xi, ops.constant(np.array([0])))))
    rh = ops.result(h2)
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([rh], [xi, hi], "body"))
    ti.set_sliced_input(xi, X.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(hi, H.output(0), rh.output(0))
    m = ov.Model([ti.get_iter_value(rh.output(0), -1)], [X, H], "api")
    xml = save(m, tmp_path)
    feeds = {"X": np.ones((4, 2), np.float32), "H": np.zeros(2, np.float32)}
    model = ig.load(str(xml))
    (got,) = model.run(feeds).values()
    ig.save(model, str(tmp_path / "again.xml"))
    (want,) = run_ov(xml, feeds)
    (again,) = run_ov(tmp_path / "again.xml", feeds)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(again, want, rtol=1e-6)
