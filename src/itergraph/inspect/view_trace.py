"""Reading a trace file for the loop page and summarising each entry step by step.

The file is an ``.npz`` with, per traced tensor key ``K`` (a qualified name such as
``outer/inner/h``), ``K/values`` (the steps stacked on axis 0) and ``K/steps`` (int64
``[n, depth]``: the step index of each enclosing loop, outermost first), and ``__meta__``, a
JSON string: ``{"model", "backend", "entries": {K: {"loops": [...], "tensor", "kind"}},
"divergence": {"entry", "step": [...], "loop", "engines": [a, b]}}`` (divergence optional).
An entry whose shape changes from step to step (``"ragged": true`` in its description) has
``K/values/0``, ``K/values/1``, ... one array per step instead of ``K/values``.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError

MAX_POINTS = 1000  # steps drawn per plot; longer traces are sampled evenly


@dataclass
class Entry:
    key: str
    loops: list[str]
    tensor: str
    kind: str
    steps: np.ndarray  # [n, depth]
    summary: dict[str, list[float]] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)  # one per drawn step
    mark: int | None = None  # drawn index of the first divergence
    shape: tuple | str = ()
    dtype: str = ""


@dataclass
class Trace:
    model: str
    backend: str
    entries: list[Entry]
    divergence: dict[str, Any] | None


def _meta(f, path: str) -> dict:
    if "__meta__" not in f.files:
        raise InputError(f"trace '{path}': no __meta__ entry")
    raw = f["__meta__"]
    try:
        text = bytes(raw).decode() if raw.dtype == np.uint8 else str(raw.item() if raw.ndim == 0
                                                                       else raw.reshape(-1)[0])
        meta = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"trace '{path}': __meta__ is not JSON: {e}") from None
    if not isinstance(meta, dict):
        raise InputError(f"trace '{path}': __meta__ is not a JSON object")
    return meta


def summarise_ragged(values: list[np.ndarray]) -> dict[str, list[float]]:
    """`summarise` for steps of different shapes, one array per step."""
    out: dict[str, list[float]] = {"mean": [], "min": [], "max": [], "norm": []}
    for v in values:
        one = summarise(np.asarray(v).reshape(1, -1))
        for k in out:
            out[k].append(one[k][0])
    return out


def summarise(values: np.ndarray) -> dict[str, list[float]]:
    """mean, min, max and L2 norm of each step (row) of `values`; NaN for an empty step."""
    n = values.shape[0]
    flat = values.reshape(n, -1)
    if flat.dtype.kind not in "biuf":
        flat = np.zeros((n, 0))
    flat = flat.astype(np.float64)
    if flat.shape[1] == 0:
        nan = [float("nan")] * n
        return {"mean": nan, "min": nan, "max": nan, "norm": nan}
    with np.errstate(all="ignore"):
        return {"mean": flat.mean(axis=1).tolist(), "min": flat.min(axis=1).tolist(),
                "max": flat.max(axis=1).tolist(),
                "norm": np.sqrt((flat * flat).sum(axis=1)).tolist()}


def read_trace(path: str) -> Trace:
    """The entries of the trace file at `path`, each summarised per step (see module doc)."""
    try:
        f = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise InputError(f"cannot read trace '{path}': {type(e).__name__}: {e}") from None
    with f:
        meta = _meta(f, path)
        declared = meta.get("entries") or {}
        keys = list(declared) or sorted({k.rsplit("/", 1)[0] for k in f.files
                                         if k.endswith("/values")})
        div = meta.get("divergence") or None
        entries = []
        for key in keys:
            info = declared.get(key) or {}
            ragged = f"{key}/values" not in f.files and f"{key}/values/0" in f.files
            if (not ragged and f"{key}/values" not in f.files) or f"{key}/steps" not in f.files:
                raise InputError(f"trace '{path}': entry '{key}' lacks '{key}/values' or "
                                 f"'{key}/steps'")
            steps = f[f"{key}/steps"]
            if ragged:
                values: Any = []
                while f"{key}/values/{len(values)}" in f.files:
                    values.append(f[f"{key}/values/{len(values)}"])
                count, shape = len(values), "varies"
                dtype = str(values[0].dtype)
            else:
                values = f[f"{key}/values"]
                count, shape, dtype = values.shape[0], values.shape[1:], str(values.dtype)
            steps = steps.reshape(len(steps), -1) if steps.size else steps.reshape(count, -1)
            if len(steps) != count:
                raise InputError(f"trace '{path}': entry '{key}' has {count} values "
                                 f"but {len(steps)} step indices")
            e = Entry(key, [str(x) for x in info.get("loops", [])], str(info.get("tensor", key)),
                      str(info.get("kind", "body")), steps, shape=shape, dtype=dtype)
            n = count
            mark = None
            if div and div.get("entry") == key:
                want = [int(x) for x in div.get("step", [])]
                hits = [i for i in range(n) if steps[i].tolist() == want]
                mark = hits[0] if hits else None
            picks = list(range(n))
            if n > MAX_POINTS:
                picks = sorted(set(np.linspace(0, n - 1, MAX_POINTS).astype(int).tolist())
                               | ({mark} if mark is not None else set()))
            if ragged:
                summary = summarise_ragged([values[i] for i in picks])
            else:
                summary = summarise(values[picks] if n else values)
            e.summary = summary
            e.labels = [",".join(str(int(s)) for s in steps[i]) for i in picks]
            e.mark = picks.index(mark) if mark is not None else None
            entries.append(e)
    return Trace(str(meta.get("model", "")), str(meta.get("backend", "")), entries, div)
