"""How ONNX Runtime and OpenVINO fare on a converter's file, for the generators' manifests.

`run_peer(runtime, model, feeds, outputs, rtol, atol)` runs `model` on `feeds` in a child
process (``python peer_record.py --peer RUNTIME MODEL NPZ RTOL ATOL``: a peer that crashes
takes only the child with it, and the child imports no framework) and returns ``ok``,
``mismatch: ...`` against the framework's `outputs`, or ``error: ...`` with the line of the
peer's message that says what went wrong (`message`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

PEER_FLAG = "--peer"
NOISE = ("Exception from ", "Check 'false' failed", "FrontEnd API failed",
         "Model wasn't fully converted", "Summary:", "-- Conversion is failed", "While validating")


def message(exc: BaseException | str) -> str:
    """The line of an error that says what went wrong (OpenVINO wraps it in location lines)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    op = next((ln[3:].split(" ")[0] for ln in lines if ln.startswith("-- ")
               and ln.endswith("with a message:")), None)
    useful = [ln for ln in lines if not ln.startswith(NOISE) and not ln.startswith("-- ")]
    text = useful[0] if useful else (lines[0] if lines else type(exc).__name__)
    return (f"{op}: {text}" if op else text)[:300]


def compare(got: list, expected: list, rtol: float, atol: float,
            exact_dtype: bool = False) -> str:
    """``ok`` or ``mismatch: ...`` for two lists of arrays."""
    if len(got) != len(expected):
        return f"mismatch: {len(got)} outputs, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        if g.shape != e.shape:
            return f"mismatch: output {i} shape {list(g.shape)}, expected {list(e.shape)}"
        if exact_dtype and g.dtype != e.dtype:
            return f"mismatch: output {i} dtype {g.dtype}, expected {e.dtype}"
        if e.dtype == bool or np.issubdtype(e.dtype, np.integer):
            if not np.array_equal(g, e):
                return f"mismatch: output {i} differs in {int((g != e).sum())} elements"
            continue
        if not np.allclose(g, e, rtol=rtol, atol=atol):
            err = np.abs(g.astype(np.float64) - e.astype(np.float64))
            return f"mismatch: output {i} max err {float(err.max()):.3g}"
    return "ok"


def run_peer(runtime: str, model: Path, feeds: dict, outputs: list, rtol: float, atol: float,
             exact_dtype: bool = False) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "peer.npz"
        arrays = {f"in{i}": v for i, v in enumerate(feeds.values())}
        arrays.update({f"out{i}": v for i, v in enumerate(outputs)})
        np.savez(data, names=json.dumps(list(feeds)), n_out=len(outputs), **arrays)
        cmd = [sys.executable, __file__, PEER_FLAG, runtime, str(model), str(data),
               repr(rtol), repr(atol), str(int(exact_dtype))]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return "error: timed out after 300 s"
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("PEER:")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"error: child exited with {proc.returncode}: {tail[:200]}"
    return lines[-1][len("PEER:"):]


def _peer_child(runtime: str, model: str, data: str, rtol: float, atol: float,
                exact_dtype: bool) -> str:
    """Run `model` on the feeds in `data` with `runtime`; compare with the stored outputs."""
    arrays = np.load(data)
    names = json.loads(str(arrays["names"]))
    feeds = {n: arrays[f"in{i}"] for i, n in enumerate(names)}
    expected = [arrays[f"out{i}"] for i in range(int(arrays["n_out"]))]
    try:
        if runtime == "onnxruntime":
            import onnxruntime as ort
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
            got = sess.run(None, feeds)
        else:
            import openvino as ov
            compiled = ov.Core().compile_model(model, "CPU", {
                "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1})
            res = compiled(feeds)
            got = [res[o] for o in compiled.outputs]
    except Exception as exc:  # noqa: BLE001 - the peer's own failure is what is recorded
        return f"error: {message(exc)}"
    return compare(got, expected, rtol, atol, exact_dtype)


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == PEER_FLAG:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _rt, _model, _data, _rtol, _atol, _exact = sys.argv[2:8]
    print("PEER:" + _peer_child(_rt, _model, _data, float(_rtol), float(_atol),
                                bool(int(_exact))), flush=True)
    sys.exit(0)
