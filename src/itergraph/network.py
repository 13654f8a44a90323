"""The TensorRT-style network-definition API: ``import itergraph.network as trt``.

See :mod:`itergraph.frontends.network` for the details; this module re-exports its names.
"""

from .frontends.network import *  # noqa: F401,F403
from .frontends.network import __all__  # noqa: F401
