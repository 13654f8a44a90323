"""The TensorRT-style network-definition API: ``import itergraph.network as trt``.

See :mod:`itergraph.tensorrt` for the details; this module re-exports its names.
"""

from .tensorrt import *  # noqa: F401,F403
from .tensorrt import __all__  # noqa: F401
