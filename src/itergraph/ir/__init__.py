"""The itergraph IR: graphs, nodes, values, types, and the canonical loop. No format imports."""

from .graph import Graph, Node, Value, reads
from .loop import UNBOUNDED_TRIP_COUNT, Carried, Concat, Invariant, Last, Loop, Sliced
from .traversal import all_graphs, loops, replace_all_uses, replace_input, toposort
from .types import DataType, Dim, MapType, OptionalType, SequenceType, TensorType, Type, tensor
from .verifier import verify

__all__ = [
    "Carried", "Concat", "DataType", "Dim", "Graph", "Invariant", "Last", "Loop", "Node",
    "MapType", "OptionalType", "SequenceType", "Sliced", "TensorType", "Type",
    "UNBOUNDED_TRIP_COUNT",
    "Value", "all_graphs", "loops", "reads", "replace_all_uses", "replace_input", "tensor",
    "toposort", "verify",
]
