"""Inputs made up for a run, as Polygraphy and OpenVINO's ``benchmark_app`` make them: every
input the user did not give gets random values of its declared element type and shape.

``generated_feeds(graph, given, shapes, seed, ranges)``: a symbolic or unknown dimension
takes its size from `shapes` (``{"X": (1, 16000)}``, the command line's ``--input-shapes``),
else from another input given with the same symbolic name, else it is an `InputError` naming
the input and the dimension. Floats are uniform in ``[0, 1)``, integers in ``[0, 10)`` and
booleans fair coin flips, unless `ranges` gives ``{name: (low, high)}``; one NumPy generator
seeded with `seed` draws them in input order, so a seed repeats a run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import InputError
from .ir.graph import Graph
from .ir.types import DataType, TensorType

DEFAULT_RANGES = {"f": (0.0, 1.0), "i": (0, 10), "u": (0, 10)}


def _symbols(graph: Graph, given: dict[str, Any]) -> dict[str, int]:
    """Sizes of symbolic dimensions, read off the inputs the user gave."""
    out: dict[str, int] = {}
    for v in graph.inputs:
        t = v.type
        if v.name not in given or not isinstance(t, TensorType) or t.shape is None:
            continue
        shape = np.shape(given[v.name])
        if len(shape) != len(t.shape):
            continue
        for d, n in zip(t.shape, shape):
            if isinstance(d, str):
                out.setdefault(d, int(n))
    return out


def generated_feeds(graph: Graph, given: dict[str, Any],
                    shapes: dict[str, tuple] | None = None, seed: int = 0,
                    ranges: dict[str, tuple] | None = None) -> tuple[dict[str, Any], list[str]]:
    """`given` completed with random values for the inputs it lacks; also one line per
    generated input saying what was made (for the user to see, with the seed)."""
    shapes, ranges = dict(shapes or {}), dict(ranges or {})
    names = {v.name for v in graph.inputs}
    unknown = sorted(n for n in set(shapes) | set(ranges) if n not in names)
    if unknown:
        raise InputError(f"the model has no input {', '.join(repr(n) for n in unknown)}")
    rng = np.random.default_rng(seed)
    symbols = _symbols(graph, given)
    feeds, said = dict(given), []
    for v in graph.inputs:
        if v.name in feeds or v.const is not None:
            continue
        t = v.type if isinstance(v.type, TensorType) else None
        if t is None or t.dtype is None or t.dtype in (DataType.STRING,):
            raise InputError(f"input '{v.name}' ({v.type}) cannot be made up: feed it")
        if v.name in shapes:
            dims = tuple(int(d) for d in shapes[v.name])
        elif t.shape is None:
            raise InputError(f"input '{v.name}' has no declared shape: give it "
                             f"(--input-shapes {v.name}:[...]) or feed it")
        else:
            dims = []
            for k, d in enumerate(t.shape):
                if isinstance(d, int) and d >= 0:
                    dims.append(d)
                elif isinstance(d, str) and d in symbols:
                    dims.append(symbols[d])
                else:
                    raise InputError(
                        f"input '{v.name}': dimension {k} ({d if d is not None else '?'}) has "
                        f"no size: give it (--input-shapes {v.name}:[...]) or feed the input")
            dims = tuple(dims)
        npdt = np.dtype(t.dtype.numpy)
        if npdt.kind == "b":
            value = rng.random(dims) < 0.5
            what = "booleans"
        else:
            lo, hi = ranges.get(v.name, DEFAULT_RANGES.get(npdt.kind, (0.0, 1.0)))
            if npdt.kind in "iu":
                value = rng.integers(int(lo), int(hi), dims, endpoint=False).astype(npdt)
            else:
                value = rng.uniform(float(lo), float(hi), dims).astype(npdt)
            what = f"uniform in [{lo}, {hi})"
        feeds[v.name] = value
        said.append(f"generated input '{v.name}': {npdt}{list(dims)}, {what}, seed {seed}")
    return feeds, said
