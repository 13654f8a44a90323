"""Traces in memory and on disk.

A trace maps each traced tensor's qualified name ``K`` to a `TraceEntry`: its values at every
step traced (stacked on axis 0, or a list of arrays when the shape varies from step to step),
the step indices (int64 ``[n, depth]``: the step of each enclosing loop, outermost first), the
enclosing loops' names, the tensor's own name and its kind (``carried``, ``condition``,
``body``).

On disk it is an ``.npz`` (uncompressed, so entries load one at a time): per entry
``K/values`` (or, for a ragged entry, ``K/values/0``, ``K/values/1``, ... one per step) and
``K/steps``, and ``__meta__``, a JSON string: ``{"model", "backend", "entries": {K: {"loops",
"tensor", "kind"}}}`` (plus ``"ragged": true`` on ragged entries). `TraceWriter` writes the
file entry by entry, so a trace is never all in memory; `load_trace` reads it back, each
entry's arrays being read from the file when first used.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError

META = "__meta__"


@dataclass
class TraceEntry:
    """One traced tensor (see the module docstring)."""

    key: str
    tensor: str
    loops: list[str]
    kind: str
    values: Any  # ndarray [n, ...] or list of n arrays (ragged)
    steps: np.ndarray

    @property
    def ragged(self) -> bool:
        return isinstance(self.values, list)

    def __len__(self) -> int:
        return int(self.steps.shape[0])

    def __repr__(self) -> str:
        """One line: the tensor, its loops, the steps traced and the values' shape."""
        if self.ragged:
            shape = "ragged"
        else:
            v = np.asarray(self.values)
            shape = f"{v.dtype}{list(v.shape[1:])}"
        where = " > ".join(self.loops)
        return f"<TraceEntry '{self.key}' ({self.kind}) in {where}: {len(self)} steps of {shape}>"


@dataclass
class Trace(Mapping):
    """Traced tensors by qualified name, with the model and backend they came from."""

    model: str
    backend: str
    entries: dict[str, TraceEntry] = field(default_factory=dict)
    #: the model's own outputs from the traced run (in-memory traces only)
    outputs: dict[str, Any] = field(default_factory=dict)
    #: default tensors left out because they are not tensors (a list carried by a loop)
    skipped: list[str] = field(default_factory=list)

    def __getitem__(self, key: str) -> TraceEntry:
        return self.entries[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def meta(self) -> dict:
        return _meta(self.model, self.backend, self.entries.values())

    def __repr__(self) -> str:
        """A summary, one line per traced tensor (``print(trace)`` shows no arrays)."""
        head = (f"<Trace of {self.model or 'a model'} on {self.backend}: {len(self)} tensors"
                + (f", {len(self.outputs)} outputs" if self.outputs else "")
                + (f", {len(self.skipped)} skipped" if self.skipped else "") + ">")
        return "\n".join([head, *(f"  {e!r}" for e in self.entries.values())])


def _meta(model: str, backend: str, entries) -> dict:
    out: dict[str, Any] = {}
    for e in entries:
        d: dict[str, Any] = {"loops": list(e.loops), "tensor": e.tensor, "kind": e.kind}
        if e.ragged:
            d["ragged"] = True
        out[e.key] = d
    return {"model": model, "backend": backend, "entries": out}


class TraceWriter:
    """Writes a trace file entry by entry (`add`), then its ``__meta__`` (`close`)."""

    def __init__(self, path: str | os.PathLike, model: str, backend: str):
        self.path = Path(path)
        self.model, self.backend = model, backend
        self._done: list[TraceEntry] = []
        try:
            self._zip = zipfile.ZipFile(self.path, "w", zipfile.ZIP_STORED, allowZip64=True)
        except OSError as e:
            raise InputError(f"cannot write '{self.path}': {e.strerror or e}") from None

    def _array(self, name: str, a: np.ndarray) -> None:
        with self._zip.open(name + ".npy", "w", force_zip64=True) as f:
            np.lib.format.write_array(f, np.asanyarray(a), allow_pickle=False)

    def add(self, entry: TraceEntry) -> None:
        """Write `entry`'s arrays; only its description is kept in memory."""
        if entry.ragged:
            for i, v in enumerate(entry.values):
                self._array(f"{entry.key}/values/{i}", np.asarray(v))
        else:
            self._array(f"{entry.key}/values", entry.values)
        self._array(f"{entry.key}/steps", np.asarray(entry.steps, np.int64))
        self._done.append(TraceEntry(entry.key, entry.tensor, entry.loops, entry.kind,
                                     [] if entry.ragged else None, np.empty((0, 0))))

    def close(self) -> None:
        meta = json.dumps(_meta(self.model, self.backend, self._done))
        self._array(META, np.str_(meta))
        self._zip.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _LazyEntries(dict):
    """Entries whose arrays are read from the .npz when an entry is first looked up."""

    def __init__(self, npz, meta: dict):
        super().__init__()
        self._npz, self._meta = npz, meta
        self._keys = list(meta)

    def __getitem__(self, key: str) -> TraceEntry:
        if not super().__contains__(key):
            if key not in self._meta:
                raise KeyError(key)
            d = self._meta[key]
            if d.get("ragged"):
                n = int(self._npz[f"{key}/steps"].shape[0])
                values: Any = [self._npz[f"{key}/values/{i}"] for i in range(n)]
            else:
                values = self._npz[f"{key}/values"]
            super().__setitem__(key, TraceEntry(key, d["tensor"], list(d["loops"]), d["kind"],
                                                values, self._npz[f"{key}/steps"]))
        return super().__getitem__(key)

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key) -> bool:
        return key in self._meta

    def keys(self):
        return list(self._keys)

    def values(self):
        return [self[k] for k in self._keys]

    def items(self):
        return [(k, self[k]) for k in self._keys]


def load_trace(path: str | os.PathLike) -> Trace:
    """The trace in file `path` (written by `TraceWriter` / ``itergraph trace``)."""
    try:
        npz = np.load(path, allow_pickle=False)
        meta = json.loads(str(npz[META]))
    except (OSError, ValueError, KeyError) as e:
        raise InputError(f"'{path}' is not a trace file: {e}") from None
    return Trace(meta.get("model", ""), meta.get("backend", ""),
                 _LazyEntries(npz, meta.get("entries", {})))
