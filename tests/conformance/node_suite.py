"""Running the ONNX backend node suite (``onnx.backend.test.case.node``) through itergraph.

Each case is a small model with one or more data sets; a case passes when every output of
every data set matches the expected one under the rules of ONNX's own backend runner
(``onnx.backend.test.runner.Runner.assert_similar_outputs``): same shape, same dtype, values
within ``rtol`` / ``atol`` (the case's own, default 1e-3 / 1e-7; bfloat16 at least two ULPs),
strings equal, sequences compared element by element, and ``None`` for an empty optional.

``python tests/conformance/node_suite.py`` prints the pass count (and the failures);
``known_failures.txt`` beside this file lists the cases expected to fail, with the reason.
"""

from __future__ import annotations

import functools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

KNOWN_FAILURES = Path(__file__).with_name("known_failures.txt")


@functools.cache
def cases() -> tuple:
    """Every node test case of the installed onnx, in the suite's order."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(collect_testcases())


def known_failures() -> dict[str, str]:
    """``case name -> reason`` from ``known_failures.txt`` (``name  # reason`` per line)."""
    out: dict[str, str] = {}
    for line in KNOWN_FAILURES.read_text().splitlines():
        name, _, reason = line.partition("#")
        name = name.strip()
        if name:
            out[name] = reason.strip()
    return out


def _normalize(x):
    if isinstance(x, onnx.TensorProto):
        return numpy_helper.to_array(x)
    if isinstance(x, list):
        return [_normalize(e) for e in x]
    return x


def assert_similar(ref, out, rtol: float, atol: float, where: str = "output",
                   values: bool = True) -> None:
    """Compare one expected value with one produced value (recursing into sequences).

    With ``values=False`` only the structure, shapes and dtypes are compared (random ops).
    """
    if ref is None:
        assert out is None, f"{where}: expected an empty optional, got {type(out).__name__}"
        return
    if isinstance(ref, (list, tuple)):
        assert isinstance(out, (list, tuple)), f"{where}: expected a sequence, got {type(out)}"
        assert len(out) == len(ref), f"{where}: sequence length {len(out)} != {len(ref)}"
        for j, (r, o) in enumerate(zip(ref, out)):
            assert_similar(r, o, rtol, atol, f"{where}[{j}]", values)
        return
    assert isinstance(out, np.ndarray), f"{where}: expected an ndarray, got {type(out)}"
    assert out.shape == ref.shape, f"{where}: shape {out.shape} != expected {ref.shape}"
    if not values:
        assert out.dtype == ref.dtype, f"{where}: dtype {out.dtype} != expected {ref.dtype}"
        return
    if ref.dtype == object:
        np.testing.assert_array_equal(out, ref, err_msg=where)
        return
    assert out.dtype == ref.dtype, f"{where}: dtype {out.dtype} != expected {ref.dtype}"
    if out.dtype.name == "bfloat16":
        rtol = max(rtol, 2**-6)
        out, ref = out.astype(np.float32), ref.astype(np.float32)
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol, err_msg=where)


def run_case(case, values: bool = True) -> list:
    """Run one case through ``itergraph.onnx_backend``; raises on any mismatch or error.

    Returns the outputs of the last data set. ``values=False``: see `assert_similar`.
    """
    import itergraph.onnx_backend as backend

    rep = backend.prepare(case.model, "CPU")
    for inputs, expected in case.data_sets:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # overflow/NaN warnings the cases provoke on purpose
            outs = rep.run([_normalize(x) for x in inputs])
        expected = [_normalize(x) for x in expected]
        assert len(outs) == len(expected), f"{len(outs)} outputs, expected {len(expected)}"
        for i, (r, o) in enumerate(zip(expected, outs)):
            assert_similar(r, o, case.rtol, case.atol, f"output {i}", values)
    return list(outs)


def main(argv: list[str]) -> int:
    """Run every case (or those whose name contains argv[0]); print failures and the count."""
    pattern = argv[0] if argv else ""
    known = known_failures()
    t0 = time.perf_counter()
    selected = [c for c in cases() if pattern in c.name]
    passed = 0
    unexpected: list[str] = []
    for case in selected:
        try:
            run_case(case)
        except Exception as e:  # noqa: BLE001 - report every failure
            first = (str(e).strip().splitlines() or [""])[0][:200]
            tag = "known" if case.name in known else "FAIL"
            print(f"{tag:5} {case.name}: {type(e).__name__}: {first}")
            if case.name not in known:
                unexpected.append(case.name)
        else:
            passed += 1
            if case.name in known:
                print(f"FIXED {case.name} (listed in known_failures.txt)")
    total = len(selected)
    dt = time.perf_counter() - t0
    print(f"\n{passed}/{total} ONNX node-suite cases pass ({100.0 * passed / max(total, 1):.1f}%),"
          f" {len(unexpected)} unexpected failure(s), {dt:.1f} s")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    sys.exit(main(sys.argv[1:]))
