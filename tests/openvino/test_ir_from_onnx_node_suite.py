"""The ONNX -> OpenVINO IR direction, case by case: every ONNX node-test case that OpenVINO's
own ONNX frontend runs to the expected outputs is read by itergraph, written as IR and run by
OpenVINO's CPU plugin. It gives the expected outputs, or the writer refuses it with an
`UnsupportedError` naming the limit (`REFUSED`, by op and reason); never other outputs, never
a file OpenVINO fails on, never a raw error. Run as a script
(``python tests/openvino/test_ir_from_onnx_node_suite.py``) it prints the counts (the table in
docs/openvino-opsets.md)."""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import numpy_helper
from ov_helpers import all_close_enough, run_compiled

import itergraph as ig

sys.path.insert(0, str(Path(__file__).parents[1] / "conformance"))
from node_suite import cases  # noqa: E402

CHUNKS = 4
CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}

#: text a refusal holds -> why the writer cannot write the case exactly
REFUSED = {
    "constant axis for a real input": "DFT of a real signal with an axis known only at run "
    "time: OpenVINO computes other values along axis 2 and crashes compiling the RDFT",
    "not to float8": "QuantizeLinear to float8: OpenVINO's Convert to f8 rounds twice "
    "(-50.0008 -> -48 in e4m3, not -52) and gives NaN where ONNX saturates",
    "neither rounds to nearest even nor saturates": "Cast to float8: OpenVINO's Convert to f8 "
    "rounds twice and gives NaN where ONNX saturates (the cases that pass do so only because "
    "their data has no value near a tie)",
}


def _array(x):
    """A case's input or expected output as an array (numpy scalars and ``TensorProto``s
    included: float8, 4-bit and bfloat16 ones come as ml_dtypes arrays); None for what
    OpenVINO has no tensor for (sequences, optionals)."""
    if isinstance(x, onnx.TensorProto):
        return numpy_helper.to_array(x)
    if isinstance(x, np.ndarray | np.generic):
        return np.asarray(x)
    return None


def _theirs_runs(core: ov.Core, src: Path, names, inputs, expected) -> bool:
    """Whether OpenVINO's own frontend runs the ONNX file to its expected outputs."""
    try:
        theirs = core.compile_model(core.read_model(str(src)), "CPU", CONFIG)
        return all_close_enough(run_compiled(theirs, names, inputs), expected)
    except Exception:  # noqa: BLE001 - OpenVINO's frontend or plugin refuses it
        return False


def outcome(case, tmp: Path, core: ov.Core, oracle: bool = True,
            lazy: bool = False) -> tuple[str, str] | None:
    """None when OpenVINO's own frontend does not run the case to its expected outputs (or,
    with ``oracle=False``, when OpenVINO has no tensors for its data); else
    ("ok" | "refused" | "wrong" | "openvino error" | "raw error", detail). ``lazy`` asks
    OpenVINO's frontend only about cases whose written IR does not give the expected
    outputs (a case it passes is "ok" whether or not that frontend runs it)."""
    m = case.model
    inputs, expected = ([_array(x) for x in xs] for xs in case.data_sets[0])
    if any(x is None for x in [*inputs, *expected]):
        return None
    init = {t.name for t in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in init]
    src, xml = tmp / "m.onnx", tmp / "m.xml"
    onnx.save(m, src)
    if oracle and not lazy and not _theirs_runs(core, src, names, inputs, expected):
        return None
    got = _written_outcome(src, xml, core, names, inputs, expected)
    if got[0] != "ok" and oracle and lazy and \
            not _theirs_runs(core, src, names, inputs, expected):
        return None
    return got


def _written_outcome(src: Path, xml: Path, core: ov.Core, names, inputs,
                     expected) -> tuple[str, str]:
    """The case written as IR by itergraph and run by OpenVINO's CPU plugin."""
    try:
        ig.load(src).save(xml)
    except ig.UnsupportedError as e:
        return "refused", str(e)
    except Exception as e:  # noqa: BLE001 - what the test is there to catch
        return "raw error", f"{type(e).__name__}: {e}"
    try:
        got = run_compiled(core.compile_model(str(xml), "CPU", CONFIG), names, inputs)
    except Exception as e:  # noqa: BLE001
        return "openvino error", str(e).strip().splitlines()[-1][:200]
    if not all_close_enough(got, expected):
        return "wrong", "; ".join(f"output {i}: {np.asarray(g).dtype}{np.shape(g)} "
                                  f"expected {e.dtype}{e.shape}"
                                  for i, (g, e) in enumerate(zip(got, expected)))
    bad = [f"output {i}: {g.dtype}, expected {e.dtype}"
           for i, (g, e) in enumerate(zip(got, expected)) if g.dtype != e.dtype]
    return ("wrong", "element type: " + "; ".join(bad)) if bad else ("ok", "")


def outcomes(chunk: int | None = None, lazy: bool = False) -> dict[str, tuple[str, str]]:
    out = {}
    core = ov.Core()
    todo = cases() if chunk is None else cases()[chunk::CHUNKS]
    with tempfile.TemporaryDirectory() as d:
        for case in todo:
            got = outcome(case, Path(d), core, lazy=lazy)
            if got is not None:
                out[case.name] = got
    return out


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_onnx_node_suite_written_as_ir_runs_in_openvino(chunk):
    res = outcomes(chunk, lazy=True)
    assert len(res) > 250
    problems = [f"{name}: {kind}: {detail}" for name, (kind, detail) in res.items()
                if kind != "ok" and not (kind == "refused" and any(k in detail for k in REFUSED))]
    assert not problems, "\n".join(problems)


if __name__ == "__main__":
    res = outcomes()
    print(Counter(kind for kind, _ in res.values()))
    for name, (kind, detail) in sorted(res.items()):
        if kind != "ok":
            print(f"{kind:15} {name}: {detail}")
