"""Attribute defaults: the value an op's attribute has where a node leaves it out.

One source for every reader of attributes (both backends, the writers, the TensorRT
emulator): the op's schema at the node's version (``BatchNormalization``'s ``epsilon`` is
1e-5, ``Gemm``'s ``alpha`` 1.0, ``LeakyRelu``'s ``alpha`` 0.01). The schemas are ONNX's,
which the IR cannot import: a source is injected with `set_schema_defaults` (`itergraph`
registers the ONNX frontend's, as it registers the NumPy kernels for `ir.static_values`),
asked once per (domain, op, version). ONNX does not hold the ``com.microsoft`` contrib ops'
schemas (ONNX Runtime does): `CONTRIB` has the defaults of those that share a standard op's
kernel (``FusedConv`` is ``Conv`` and an activation); the others' readers name their
defaults themselves (`semantics.ms_transformer`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .graph import MICROSOFT_DOMAIN

#: ``source(domain, op_type, version) -> {attribute: default}``; version None: the newest
Source = Callable[[str, str, "int | None"], dict[str, Any]]

#: ONNX Runtime's defaults of the contrib ops that run a standard op's kernel
CONTRIB: dict[tuple[str, str], dict[str, Any]] = {
    (MICROSOFT_DOMAIN, "FusedConv"): {"group": 1, "auto_pad": "NOTSET"},
    (MICROSOFT_DOMAIN, "FusedGemm"): {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0},
    (MICROSOFT_DOMAIN, "QLinearAveragePool"): {"ceil_mode": 0, "count_include_pad": 0,
                                               "channels_last": 0, "auto_pad": "NOTSET"},
}

_source: Source | None = None
_cache: dict[tuple[str, str, int | None], dict[str, Any]] = {}


def set_schema_defaults(source: Source | None) -> None:
    """Read defaults from `source` (None: no defaults known)."""
    global _source
    _source = source
    _cache.clear()


def defaults(domain: str, op_type: str, version: int | None = None) -> dict[str, Any]:
    """The attributes of `op_type` that have a default, with it (read-only)."""
    key = (domain, op_type, version)
    d = _cache.get(key)
    if d is None:
        d = CONTRIB.get((domain, op_type)) or (_source(*key) if _source is not None else {})
        _cache[key] = d
    return d
