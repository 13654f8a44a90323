"""``itergraph.backend``: the public name of the ONNX backend API, kept importable.

The API lives in :mod:`itergraph.onnx_backend` (the name says which backend API it is, and no
longer reads as a typo of ``backends/``). This module only re-exports its public names, so that
``import itergraph.backend as backend`` keeps working for users; it is kept for that public
name alone, and code inside itergraph imports :mod:`itergraph.onnx_backend`.
"""

from .onnx_backend import (
    BackendRep,
    ItergraphBackend,
    is_compatible,
    prepare,
    run_model,
    run_node,
    supports_device,
)

__all__ = [
    "BackendRep", "ItergraphBackend", "is_compatible", "prepare", "run_model", "run_node",
    "supports_device",
]
