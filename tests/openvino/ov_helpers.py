"""Helpers for the OpenVINO frontend tests: OpenVINO is the oracle.

`check_model(model, feeds, tmp_path)` saves an ``ov.Model`` as IR, reads it with itergraph, runs
it on the NumPy backend and compares with OpenVINO; then writes the graph back with
itergraph's writer and has OpenVINO run the written files, comparing again.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import openvino as ov

import itergraph as ig
from itergraph.backends.numpy import run_graph
from itergraph.frontends.openvino import read, write
from itergraph.ir import verify

CORE = ov.Core()
CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


def run_ov(model_or_path, feeds: dict) -> list[np.ndarray]:
    """Run with OpenVINO's CPU plugin in f32; outputs in model order."""
    m = CORE.read_model(str(model_or_path)) if isinstance(model_or_path, str | Path) \
        else model_or_path
    c = CORE.compile_model(m, "CPU", CONFIG)
    r = c(feeds)
    return [np.asarray(r[o]) for o in c.outputs]


def save(model: ov.Model, tmp_path: Path, name: str = "model", compress: bool = False) -> Path:
    """`model` as IR; `compress` (or ``IG_OV_COMPRESS=1`` in the environment, to run a whole
    test module so): float weights stored as float16 with a Convert after each, what
    ``ov.save_model`` and OpenVINO's converters write by default."""
    path = tmp_path / f"{name}.xml"
    ov.save_model(model, str(path),
                  compress_to_fp16=compress or os.environ.get("IG_OV_COMPRESS") == "1")
    return path


def assert_close(got, want, rtol=1e-5, atol=1e-5, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def run_itergraph(xml: Path, feeds: dict) -> list[np.ndarray]:
    g = read(xml)
    verify(g)
    return list(run_graph(g, feeds).values())


def check_model(model: ov.Model, feeds: dict, tmp_path: Path, rtol=1e-5, atol=1e-5,
                write_back: bool = True, compress: bool = False):
    """OpenVINO vs itergraph on the saved model (`compress`: see `save`), then OpenVINO on
    itergraph's written copy, then the ONNX copy (`onnx_copy_agrees`)."""
    xml = save(model, tmp_path, compress=compress)
    want = run_ov(xml, feeds)
    g = read(xml)
    verify(g)
    got = list(run_graph(g, feeds).values())
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert_close(a, b, rtol, atol, f"itergraph output {i}")
    compiled = list(ig.load(g).run(feeds, backend="jax").values())
    for i, (a, b) in enumerate(zip(compiled, want)):
        assert_close(a, b, max(rtol, 1e-4), max(atol, 1e-4), f"itergraph jax output {i}")
    if write_back:
        out = tmp_path / "written.xml"
        write(g, out)
        again = run_ov(out, feeds)
        for i, (a, b) in enumerate(zip(again, want)):
            assert_close(a, b, rtol, atol, f"written model, OpenVINO output {i}")
    onnx = onnx_copy_agrees(g, feeds, want, tmp_path, max(rtol, 1e-5), max(atol, 1e-5))
    record({el.get("type") for el in ET.parse(xml).iter("layer")}, "numpy", "jax",
           *(["write"] if write_back else []), *(["onnx"] if onnx else []))
    return g, want


def onnx_copy_agrees(g, feeds: dict, want, tmp_path: Path, rtol, atol) -> bool:
    """Whether itergraph's ONNX copy of `g` runs in ONNX Runtime, or else in OpenVINO's ONNX
    frontend (``org.openvinotoolkit`` ops), to OpenVINO's outputs `want`. False when the ONNX
    writer refuses the graph or neither runtime loads the copy (a construct ONNX cannot
    express, counted apart by the coverage report); a copy that runs to other values fails."""
    import onnxruntime as ort

    path = tmp_path / "copy.onnx"
    try:
        ig.save(ig.load(g), path)
    except ig.Error:
        return False
    runners = [lambda: ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, feeds), lambda: run_ov(path, feeds)]
    for runner in runners:
        try:
            got = runner()
        except Exception:  # the runtime does not read this copy
            continue
        assert len(got) == len(want)
        for i, (a, b) in enumerate(zip(got, want)):
            assert_close(a, b, rtol, atol, f"ONNX copy, output {i}")
        return True
    return False


def record(types, *stages: str) -> None:
    """Append op `types` and the `stages` a model of them passed (``numpy``, ``jax``: itergraph
    equals OpenVINO; ``write``: OpenVINO runs itergraph's IR to the same outputs; ``onnx``:
    the ONNX copy does in ONNX Runtime or OpenVINO) to the file named by
    ``IG_OV_OPSET_RECORD`` (the evidence of tests/openvino/opset/coverage.py)."""
    path = os.environ.get("IG_OV_OPSET_RECORD")
    if not path:
        return
    with open(path, "a") as f:
        f.write(json.dumps({"types": sorted(types), "stages": list(stages)}) + "\n")


#: ml_dtypes element types (as ``onnx.numpy_helper`` gives them) -> OpenVINO's, stored one
#: element a byte (or two) in both
_BITWISE = {"bfloat16": ov.Type.bf16, "float8_e4m3fn": ov.Type.f8e4m3,
            "float8_e5m2": ov.Type.f8e5m2}
#: ... and those OpenVINO packs two a byte (low nibble first)
_NIBBLES = {"int4": ov.Type.i4, "uint4": ov.Type.u4, "float4_e2m1fn": ov.Type.f4e2m1}


def to_ov_tensor(x):
    """`x` as OpenVINO takes it: a NumPy array, or an ``ov.Tensor`` for the element types
    NumPy has not (bfloat16, float8, 4-bit), whose bits OpenVINO's Python API would not
    carry over from an ml_dtypes array."""
    a = np.asarray(x, order="C")
    name = a.dtype.name
    if name in _BITWISE:
        t = ov.Tensor(_BITWISE[name], list(a.shape))
        t.data.reshape(-1).view(np.uint8)[:] = a.reshape(-1).view(np.uint8)
        return t
    if name in _NIBBLES:
        t = ov.Tensor(_NIBBLES[name], list(a.shape))
        flat = a.reshape(-1).view(np.uint8) & 0xF
        if flat.size % 2:
            flat = np.append(flat, np.uint8(0))
        t.data.reshape(-1).view(np.uint8)[:] = flat[0::2] | (flat[1::2] << 4)
        return t
    return a


def from_ov_tensor(t: ov.Tensor) -> np.ndarray:
    """The values of OpenVINO tensor `t` (bfloat16, float8 and 4-bit ones as ml_dtypes)."""
    import ml_dtypes

    et = t.element_type.get_type_name()
    shape = tuple(t.shape)
    names = {v.get_type_name(): k for k, v in {**_BITWISE, **_NIBBLES}.items()}
    if et in names:
        dt = np.dtype(getattr(ml_dtypes, names[et]))
        raw = np.array(t.data).reshape(-1).view(np.uint8)
        if names[et] in _NIBBLES:
            raw = np.stack([raw & 0xF, raw >> 4], axis=1).reshape(-1)[:int(np.prod(shape))]
            if names[et] == "int4":
                return (raw.astype(np.int8) << 4 >> 4).astype(dt).reshape(shape)
            if names[et] == "uint4":
                return raw.astype(dt).reshape(shape)
        return raw.view(dt).reshape(shape)
    return np.array(t.data).reshape(shape)


def run_compiled(compiled, names: list[str], values: list) -> list[np.ndarray]:
    """Run compiled model `compiled` on `values` (graph inputs `names`, in order): each input
    port takes the value of the name it carries, else the value at its position (OpenVINO's
    ONNX frontend may leave a port without the graph input's name); outputs in model order."""
    by_name = dict(zip(names, values))
    req = compiled.create_infer_request()
    for i, port in enumerate(compiled.inputs):
        hit = [n for n in port.get_names() if n in by_name]
        req.set_input_tensor(i, _as_tensor(to_ov_tensor(by_name[hit[0]] if hit else values[i])))
    req.infer()
    return [from_ov_tensor(req.get_output_tensor(i)) for i in range(len(compiled.outputs))]


def _as_tensor(x) -> ov.Tensor:
    return x if isinstance(x, ov.Tensor) else ov.Tensor(np.asarray(x, order="C"))


def _plain(a: np.ndarray) -> np.ndarray:
    """ml_dtypes values as float32 / int8 for comparing."""
    if a.dtype.name in _BITWISE or a.dtype.name == "float4_e2m1fn":
        return a.astype(np.float32)
    if a.dtype.name in _NIBBLES:
        return a.astype(np.int8)
    return a


def close_enough(a, b) -> bool:
    """Same shape and, for floats, values within rtol 1e-3 / atol 1e-4 (NaNs equal); else
    equal: how the node-suite tests compare OpenVINO's outputs. bfloat16 values within two of
    its ulps (rtol 2**-6), as ONNX's backend test runner allows."""
    a, b = np.asarray(a), np.asarray(b)
    rtol = 2**-6 if "bfloat16" in (a.dtype.name, b.dtype.name) else 1e-3
    a, b = _plain(a), _plain(b)
    if a.shape != b.shape:
        return False
    if b.dtype.kind in "fc":
        return np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=1e-4,
                           equal_nan=True)
    return np.array_equal(a, b)


def all_close_enough(got, want) -> bool:
    return len(got) == len(want) and all(close_enough(a, b) for a, b in zip(got, want))
