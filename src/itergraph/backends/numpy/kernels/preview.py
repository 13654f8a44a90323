"""Ops of the ONNX preview domains (``ai.onnx.preview``, ``ai.onnx.preview.training``).

They have no native kernels: each runs through its ``onnx.reference`` implementation (see
`itergraph.backends.numpy.fallback`). They are registered here so that the executor finds
them in the kernel table like any other op.
"""

from __future__ import annotations

from ..fallback import fallback_factory
from . import KERNELS

_PREVIEW_OPS = {
    "ai.onnx.preview.training": ("Adagrad", "Adam", "Momentum", "Gradient"),
    "ai.onnx.preview": ("FlexAttention",),
}

for _domain, _ops in _PREVIEW_OPS.items():
    for _op in _ops:
        KERNELS.add(_op, fallback_factory, since=1, domain=_domain)
