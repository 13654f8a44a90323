"""Verdicts: what one mutant's run says, and the findings it holds, deduplicated by
(verdict, exception type, innermost itergraph frame).

Verdicts, worst first: ``crash`` (the child died), ``hang`` (no result within the time
limit), ``memory`` (a MemoryError, or an allocator's or XLA's out-of-memory, under the
address-space cap), ``raw`` (an exception that is not an `itergraph.Error`), ``disagree``
(NumPy and JAX give different outputs, or one runs and the other raises), ``roundtrip`` (the
model saved in the other format and read back runs to other outputs), ``wrong`` (a run wrote
into the caller's feeds), ``error`` (a clean `itergraph.Error`), ``ok``, and ``n/a`` (the
operator found nothing to mutate). All but ``error``, ``ok`` and ``n/a`` are findings.
"""

from __future__ import annotations

import math
import traceback
from pathlib import Path

import numpy as np

ORDER = ("crash", "hang", "memory", "raw", "disagree", "roundtrip", "wrong", "error", "ok",
         "n/a")
FINDINGS = ORDER[:7]
RTOL, ATOL = 1e-3, 1e-4
MEMORY_WORDS = ("RESOURCE_EXHAUSTED", "Cannot allocate memory", "bad_alloc", "Out of memory",
                "out of memory", "Unable to allocate")


def innermost_frame(tb) -> str:
    """``file:function`` of the innermost frame inside the itergraph package."""
    found = ""
    for fs in traceback.extract_tb(tb):
        parts = Path(fs.filename).parts
        if "itergraph" in parts:
            rel = "/".join(parts[len(parts) - parts[::-1].index("itergraph"):])
            found = f"{rel}:{fs.name}"
    return found


def stage_outcome(e: BaseException | None) -> dict:
    """A stage's outcome: ``ok``, a clean ``error`` (with its public kind), or ``raw``."""
    if e is None:
        return {"kind": "ok"}
    from harness import _kind

    from itergraph.errors import Error

    out = {"type": type(e).__name__, "msg": str(e)[:600],
           "frame": innermost_frame(e.__traceback__)}
    if isinstance(e, Error):
        return {"kind": "error", "cls": _kind(e), **out}
    memory = isinstance(e, MemoryError) or any(w in str(e) for w in MEMORY_WORDS)
    return {"kind": "memory" if memory else "raw", **out,
            "tb": "".join(traceback.format_exception(e, limit=-8))[-3000:]}


def _leaves(value, path="") -> list[tuple[str, object]]:
    if isinstance(value, dict):
        return [x for k in sorted(value, key=str) for x in _leaves(value[k], f"{path}[{k!r}]")]
    if isinstance(value, (list, tuple)):
        return [("len" + path, len(value))] + [x for i, v in enumerate(value)
                                               for x in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


def differ(a: dict, b: dict, rtol: float = RTOL, atol: float = ATOL) -> str | None:
    """None when two runs' outputs agree (names, shapes, dtypes, values within `rtol` and an
    `atol` scaled by the outputs' magnitude, NaN where NaN); else what differs."""
    rtol, atol = max(rtol, RTOL), max(atol, ATOL)
    if list(a) != list(b):
        return f"output names {list(a)} vs {list(b)}"
    for name in a:
        la, lb = _leaves(a[name]), _leaves(b[name])
        if len(la) != len(lb):
            return f"output '{name}': structure differs"
        for (pa, x), (pb, y) in zip(la, lb):
            if pa != pb:
                return f"output '{name}': structure {pa} vs {pb}"
            what = f"output '{name}'{pa}"
            if x is None or y is None or isinstance(x, (int, str)) and not isinstance(x, bool):
                if not (x is None and y is None) and x != y:
                    return f"{what}: {x!r} vs {y!r}"
                continue
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape:
                return f"{what}: shape {x.shape} vs {y.shape}"
            if x.dtype != y.dtype:
                return f"{what}: dtype {x.dtype} vs {y.dtype}"
            if x.dtype.kind in "OUS":
                if not np.array_equal(x.astype(str), y.astype(str)):
                    return f"{what}: strings differ"
                continue
            if x.dtype.kind in "fc":
                xf, yf = x.astype(np.complex128), y.astype(np.complex128)
                if not np.array_equal(np.isnan(xf), np.isnan(yf)):
                    return f"{what}: NaN in different places"
                ok = ~np.isnan(xf)
                fin = np.isfinite(xf) & np.isfinite(yf)
                scale = float(np.max(np.abs(xf[fin]), initial=0.0))
                tol = atol * max(1.0, scale) if math.isfinite(scale) else atol
                close = np.isclose(xf[ok], yf[ok], rtol=rtol, atol=tol)
                if not close.all():
                    i = int(np.argmin(close))
                    return f"{what}: {x[ok][i]} vs {y[ok][i]}"
            elif not np.array_equal(x, y):
                i = int(np.argmax(x.reshape(-1) != y.reshape(-1)))
                return f"{what}: {x.reshape(-1)[i]} vs {y.reshape(-1)[i]}"
    return None


def findings(res: dict) -> list[dict]:
    """The findings of one mutant's result (as the child reported it, or the crash or hang
    the parent recorded): ``{"verdict", "type", "frame", "stage", "msg"}`` each."""
    kind = res.get("kind")
    if kind in ("crash", "hang"):
        stage = res.get("stage", "")
        return [{"verdict": kind, "type": res.get("msg", "")[:60], "frame": stage,
                 "stage": stage, "msg": res.get("stderr", "")[-1500:]}]
    out = []
    for stage, o in res.get("stages", {}).items():
        if o.get("kind") in ("raw", "memory"):
            out.append({"verdict": "raw" if o["kind"] == "raw" else "memory",
                        "type": o["type"], "frame": o["frame"], "stage": stage,
                        "msg": o["msg"], "tb": o.get("tb", "")})
    for check in ("disagree", "roundtrip", "wrong"):
        d = res.get(check)
        if d:
            out.append({"verdict": check, "type": d.get("type", ""), "frame": d.get("frame", ""),
                        "stage": check, "msg": d["msg"]})
    return out


def verdict(res: dict) -> str:
    """The worst verdict of one mutant's result."""
    if res.get("kind") in ("crash", "hang", "n/a"):
        return res["kind"]
    fs = findings(res)
    if fs:
        return min((f["verdict"] for f in fs), key=ORDER.index)
    if any(o.get("kind") == "error" for o in res.get("stages", {}).values()):
        return "error"
    return "ok"


def key(f: dict) -> tuple[str, str, str]:
    """A finding's identity: (verdict, exception type, innermost itergraph frame)."""
    return (f["verdict"], f["type"], f["frame"])
