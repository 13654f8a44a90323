"""Every ONNX node-test case that OpenVINO's own ONNX frontend reads, saved by OpenVINO as IR
the way ``ov.save_model`` does by default (float16-compressed weights), read by itergraph and
run on NumPy and on JAX: the outputs equal OpenVINO CPU's on that IR, or, where OpenVINO's
differ from the ONNX test's expected outputs, those. What OpenVINO converts in a way
itergraph refuses, or where neither runtime reproduces the expected outputs, is listed below
with the reason."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import pytest
from ov_helpers import all_close_enough

import itergraph as ig

sys.path.insert(0, str(Path(__file__).parents[1] / "conformance"))
from node_suite import cases  # noqa: E402

CHUNKS = 6
CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}

#: case -> why itergraph refuses OpenVINO's conversion (an UnsupportedError naming the layer,
#: or an ExecutionError where the run is undefined)
REFUSED = {
    **{f"test_bitshift_right_{t}_shift_ge_width": "OpenVINO writes the shift as a division by "
       "2**y, which overflows to 0: an integer division by zero, which both backends refuse "
       "(as ONNX Runtime does; OpenVINO's CPU plugin gives INT_MIN)" for t in ("int8", "int32")},
    **{f"test_bitshift_right_{t}_negative_shift": "a negative shift amount (undefined in ONNX), "
       "which OpenVINO writes as a division by 2**y = 0: refused as that integer division by "
       "zero" for t in ("int8", "int32")},
    **{f"test_resize_downsample_{s}_{m}_antialias": "OpenVINO's antialiased Interpolate "
       "computes otherwise than ONNX Resize" for s in ("scales", "sizes")
       for m in ("linear", "cubic")},
    "test_roialign_mode_max": "ROIAlign-9 max mode computes otherwise than ONNX RoiAlign",
}
RANDOM = "random draws"
#: case -> why neither itergraph nor OpenVINO gives the ONNX test's expected outputs
DIFFER = {
    "test_bernoulli_double_expanded": RANDOM,
    "test_bernoulli_seed_expanded": RANDOM,
    # OpenVINO's ONNX frontend writes Divide with m_pythondiv=true (floor, per OpenVINO's
    # specification, which itergraph follows) while its CPU plugin truncates, as ONNX does
    "test_div_int32_trunc": "OpenVINO's IR says floor division, its plugin truncates",
}
#: further cases where the NumPy backend's outputs are neither OpenVINO's nor ONNX's
DIFFER_NUMPY = {
    f"test_attention_{c}_bf16": "bfloat16 attention with padded keys: neither OpenVINO's "
    "float computation nor the NumPy backend's bfloat16 one is within two ulps of the "
    "expected outputs" for c in ("4d_padded_kv", "4d_causal_padded_kv")}
#: further cases where the JAX backend's outputs are neither OpenVINO's nor ONNX's
DIFFER_JAX: dict[str, str] = {}


def _run(case, tmp: Path) -> dict[str, tuple[str, str]] | None:
    """None when OpenVINO does not read or run the case; else backend -> (outcome, detail).
    OpenVINO converts the case once for both backends, and compiles and runs it only where
    a backend's outputs are not the ONNX test's expected ones (its outputs are then the
    oracle, and a case OpenVINO cannot run is not compared)."""
    m = case.model
    inputs, expected = case.data_sets[0]
    if any(not isinstance(x, np.ndarray) for x in [*inputs, *expected]):
        return None
    init = {t.name for t in m.graph.initializer}
    feeds = dict(zip([i.name for i in m.graph.input if i.name not in init], inputs))
    src, xml = tmp / "m.onnx", tmp / "m.xml"
    try:
        onnx.save(m, src)
        ov.save_model(ov.Core().read_model(str(src)), str(xml))
    except Exception:  # OpenVINO's frontend refuses it: nothing to compare
        return None
    got = {}
    try:
        model = ig.load(xml)
    except ig.Error as e:
        model = e
    for backend in ("numpy", "jax"):
        try:
            if isinstance(model, Exception):
                raise model
            got[backend] = [np.asarray(v) for v in model.run(feeds, backend=backend).values()]
        except ig.Error as e:  # judged below, once OpenVINO says whether it runs the case
            got[backend] = e
    if all(not isinstance(g, Exception) and all_close_enough(g, expected)
           for g in got.values()):
        return dict.fromkeys(got, ("ok", ""))
    try:
        compiled = ov.Core().compile_model(str(xml), "CPU", CONFIG)
        want = [np.asarray(v) for v in compiled(feeds).values()]
    except Exception:  # OpenVINO's plugin refuses it: nothing to compare
        return None
    out = {}
    for backend, g in got.items():
        if isinstance(g, Exception) and \
                not isinstance(g, ig.UnsupportedError | ig.ExecutionError):
            raise g
        out[backend] = ("refused", str(g)) if isinstance(g, Exception) else \
            ("ok", "") if all_close_enough(g, want) or all_close_enough(g, expected) else \
            ("differ", f"OpenVINO equals the ONNX outputs: {all_close_enough(want, expected)}")
    return out


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_openvino_conversions_of_the_node_suite(chunk):
    differs = {b: {**DIFFER, **extra} for b, extra in
               (("numpy", DIFFER_NUMPY), ("jax", DIFFER_JAX))}
    problems, checked = [], 0
    with tempfile.TemporaryDirectory() as d:
        for case in cases()[chunk::CHUNKS]:
            got = _run(case, Path(d))
            if got is None:
                continue
            checked += 1
            for backend, (outcome, detail) in got.items():
                differ = differs[backend]
                if outcome == "refused" and case.name not in REFUSED:
                    problems.append(f"{case.name} ({backend}): refused: {detail}")
                elif outcome == "differ" and case.name not in differ:
                    problems.append(f"{case.name} ({backend}): {detail}")
                elif outcome == "ok" and (case.name in REFUSED or case.name in differ) \
                        and differ.get(case.name) != RANDOM:
                    # (random draws without a seed may match the expected ones by chance)
                    problems.append(f"{case.name} ({backend}): listed as failing, but passes")
    assert checked > 150
    assert not problems, "\n".join(problems)
