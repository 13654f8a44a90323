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


def close_enough(a, b) -> bool:
    """Same shape and, for floats, values within rtol 1e-3 / atol 1e-4 (NaNs equal); else
    equal: how the node-suite tests compare OpenVINO's outputs."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if b.dtype.kind in "fc":
        return np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-3, atol=1e-4,
                           equal_nan=True)
    return np.array_equal(a, b)


def all_close_enough(got, want) -> bool:
    return len(got) == len(want) and all(close_enough(a, b) for a, b in zip(got, want))
