"""itergraph: one engine for the loops of neural-network graphs.

    import itergraph as ig
    m = ig.load("model.onnx")          # .onnx, .xml (+ .bin), onnx.ModelProto, ig.Graph, Network
    outs = m.run({"X": x})             # name -> ndarray / list / None, in the graph's output order
    ig.save(m, "model.xml")
"""

from .errors import (
    Error,
    ExecutionError,
    InputError,
    IterationLimitError,
    LeniencyWarning,
    ModelError,
    SecurityError,
    UnsupportedError,
)
from .ir import Graph

__version__ = "0.1.0"

__all__ = [
    "Error", "ExecutionError", "Graph", "InputError", "IterationLimitError", "LeniencyWarning",
    "Model",
    "ModelError", "SecurityError", "UnsupportedError", "load", "save",
]


def __getattr__(name):
    # api pulls in the frontends; import it lazily so `import itergraph.ir` stays light.
    if name in ("load", "save", "Model"):
        from . import api

        return getattr(api, name)
    raise AttributeError(name)
