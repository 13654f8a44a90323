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


def _symbols(graph: Graph, given: dict[str, Any],
             shapes: dict[str, tuple] | None = None) -> dict[str, int]:
    """Sizes of symbolic dimensions, read off the inputs the user gave and the shapes given
    for generated ones (``--input-shapes input:[1,512]`` sizes ``batch`` of every input)."""
    out: dict[str, int] = {}
    for v in graph.inputs:
        t = v.type
        if not isinstance(t, TensorType) or t.shape is None:
            continue
        if v.name in given:
            shape = np.shape(given[v.name])
        elif shapes and v.name in shapes:
            shape = tuple(shapes[v.name])
        else:
            continue
        if len(shape) != len(t.shape):
            continue
        for d, n in zip(t.shape, shape):
            if isinstance(d, str):
                out.setdefault(d, int(n))
    return out


def _number(x) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def generated_feeds(graph: Graph, given: dict[str, Any],
                    shapes: dict[str, tuple] | None = None, seed: int = 0,
                    ranges: dict[str, tuple] | None = None) -> tuple[dict[str, Any], list[str]]:
    """`given` completed with random values for the inputs it lacks; also one line per
    generated input saying what was made (for the user to see, with the seed)."""
    shapes, ranges = dict(shapes or {}), dict(ranges or {})
    names = {v.name for v in graph.inputs}
    unknown = sorted(n for n in set(given) | set(shapes) | set(ranges) if n not in names)
    if unknown:
        raise InputError(f"the model has no input {', '.join(repr(n) for n in unknown)} "
                         f"(its inputs: {', '.join(repr(v.name) for v in graph.inputs)})")
    for v in graph.inputs:  # a given input of the wrong rank: said before making up others
        t, x = v.type, given.get(v.name)
        if x is not None and isinstance(t, TensorType) and t.shape is not None and \
                isinstance(x, np.ndarray) and x.ndim != len(t.shape):
            raise InputError(f"input '{v.name}': expected rank {len(t.shape)} (shape "
                             f"[{', '.join('?' if d is None else str(d) for d in t.shape)}]), "
                             f"got shape {x.shape}")
    rng = np.random.default_rng(seed)
    symbols = _symbols(graph, given, shapes)
    unsized: list[str] = []
    feeds, said = dict(given), []
    for v in graph.inputs:
        if v.name in feeds or v.const is not None:
            continue
        t = v.type if isinstance(v.type, TensorType) else None
        if t is None or t.dtype is None or t.dtype in (DataType.STRING,):
            raise InputError(f"input '{v.name}' ({v.type}) cannot be made up: feed it")
        if v.name in shapes:
            dims = tuple(int(d) for d in shapes[v.name])
            if t.shape is not None and (len(dims) != len(t.shape) or any(
                    isinstance(d, int) and d >= 0 and d != n for d, n in zip(t.shape, dims))):
                raise InputError(
                    f"--input-shapes {v.name}:{list(dims)}: the input is declared "
                    f"[{', '.join('?' if d is None else str(d) for d in t.shape)}]")
        elif t.shape is None:
            raise InputError(f"input '{v.name}' has no declared shape: give it "
                             f"(--input-shapes {v.name}:[...]) or feed it")
        else:
            dims = []
            for d in t.shape:
                if isinstance(d, int) and d >= 0:
                    dims.append(d)
                elif isinstance(d, str) and d in symbols:
                    dims.append(symbols[d])
                else:
                    dims.append(None)
            if None in dims:
                decl = ", ".join("?" if d is None else str(d) for d in t.shape)
                example = ",".join("1" if n is None else str(n) for n in dims)
                unsized.append((f"'{v.name}' [{decl}]", f"{v.name}:[{example}]"))
                continue
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
            what = f"uniform in [{_number(lo)}, {_number(hi)})"
        feeds[v.name] = value
        said.append(f"generated input '{v.name}': {npdt}{list(dims)}, {what}, seed {seed}")
    if unsized:
        raise InputError(
            f"input{'s' if len(unsized) > 1 else ''} {', '.join(a for a, _ in unsized)} "
            f"{'have' if len(unsized) > 1 else 'has'} dimensions without a size: feed "
            f"{'them' if len(unsized) > 1 else 'it'} or give the shape, e.g. "
            f"--input-shapes \"{','.join(b for _, b in unsized)}\"")
    return feeds, said
