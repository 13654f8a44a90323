"""Inputs whose length changes from call to call, run padded to a few lengths.

A compiling backend makes one program per input shape, so a stream whose length varies (audio
chunks, prompts) would compile on every new length. Where padding is exact, the stream can
instead run padded up to the next power of two, a handful of programs in all:

    n = x.shape[axis]; b = bucket(n)                 # 1, 2, 4, 8, ...
    outs = run(graph', {x: x zero-padded to b along axis, VALID_LENGTH: n})
    outs[o] = outs[o][..., :n, ...]                   # along each output's padded axis

`plan_padding(graph, name, axis)` proves it (`batch_axis.padded_prefix`: every output either
does not depend on the padding or has the padded axis, whose first n slices are the unpadded
run's) and builds graph': a copy with one more input, the valid length (an int32 scalar),
which the recurrent cells that step along the padded axis take as their ``sequence_lens``
(the proof admits only cells without lengths of their own). Without a proof there is no plan:
the caller compiles the exact shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Node, Value
from ..ir.builder import Builder
from ..ir.clone import clone_graph
from ..ir.inference import node_output_types
from ..ir.types import DataType, TensorType
from .batch_axis import Batched, padded_prefix

VALID_LENGTH = "itergraph_valid_length"
#: ``node.meta`` key on the ``Expand`` that gives a cell the valid length: its entries are
#: one length, at most the padded extent (a backend may skip checking them, and stop there)
PADDED_LENGTHS = "padded_lengths"


def bucket(n: int) -> int:
    """The padded length of a length `n` >= 1: the next power of two."""
    return 1 << (n - 1).bit_length()


@dataclass(frozen=True)
class PaddedGraph:
    """`graph` (with the `VALID_LENGTH` input) runs feeds whose input `input` is padded along
    `axis`; `outputs` maps each output having the padded axis to that axis."""
    graph: Graph
    input: str
    axis: int
    outputs: dict[str, int]

    def shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The padded shape of the input's `shape`."""
        s = list(shape)
        s[self.axis] = bucket(s[self.axis])
        return tuple(s)

    def feeds(self, feeds: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """(`feeds` with the input zero-padded and the valid length added, the length)."""
        x = feeds[self.input]
        n = x.shape[self.axis]
        padded = np.zeros(self.shape(x.shape), x.dtype)
        padded[(slice(None),) * self.axis + (slice(0, n),)] = x
        out = dict(feeds)
        out[self.input] = padded
        out[VALID_LENGTH] = np.asarray(n, np.int32)
        return out, n

    def unpad(self, outs: dict[str, Any], n: int) -> dict[str, Any]:
        """The outputs of a padded run cut to the valid length `n`."""
        for name, axis in self.outputs.items():
            x = outs.get(name)
            if isinstance(x, np.ndarray) and x.shape[axis] != n:
                cut = x[(slice(None),) * axis + (slice(0, n),)]
                outs[name] = cut if axis == 0 else np.ascontiguousarray(cut)
        return outs


def plan_padding(graph: Graph, name: str, axis: int) -> PaddedGraph | None:
    """The `PaddedGraph` of input `name` padded along `axis`, or None when padding it is not
    proven exact (or the input's declared extent there is fixed)."""
    x = next((v for v in graph.inputs if v.name == name), None)
    if x is None or not isinstance(x.type, TensorType) or x.type.shape is None:
        return None
    rank = len(x.type.shape)
    if not 0 <= axis < rank or isinstance(x.type.shape[axis], int):
        return None
    if any(v.name == VALID_LENGTH for v in graph.inputs):
        return None
    copy = clone_graph(graph)
    _infer_types(copy)
    proof = padded_prefix(copy, {name: axis})
    if not proof.verdict.ok:
        return None
    outputs = {o: s.axis for o, s in proof.verdict.outputs.items() if isinstance(s, Batched)}
    length = Value(VALID_LENGTH, TensorType(DataType.INT32, ()))
    copy.inputs.append(length)
    for cell in proof.cells:
        _give_lengths(copy, cell, length)
    return PaddedGraph(copy, name, axis, outputs)


def _infer_types(graph: Graph) -> None:
    """Give the top-level values whose shape is not declared the one inference finds (the
    proof's Reshape rule reads the dims around the padded axis)."""
    opset = graph.opset("") or 21
    for n in graph.nodes:
        if all(isinstance(v.type, TensorType) and v.type.shape is not None for v in n.outputs):
            continue
        try:
            found = node_output_types(n, opset)
        except Exception:  # noqa: BLE001 - no inference: the declared types stand
            continue
        for v, t in zip(n.outputs, found):
            if isinstance(t, TensorType) and t.shape is not None and not (
                    isinstance(v.type, TensorType) and v.type.shape is not None):
                v.type = t


def _give_lengths(graph: Graph, cell: Node, length: Value) -> None:
    """``sequence_lens`` of `cell` := `length` for every entry of its batch."""
    b = Builder(graph, cell.name or cell.op_type.lower(), sep="/")
    i64 = TensorType(DataType.INT64, None)
    batch_axis = 0 if int(cell.attrs.get("layout", 0)) else 1
    shape = b.node("Shape", [cell.inputs[0]], type=TensorType(DataType.INT64, (None,)))
    batch = b.node("Gather", [shape, b.i64([batch_axis], "batch_axis")], {"axis": 0}, type=i64)
    lens = b.node("Expand", [length, batch], type=TensorType(DataType.INT32, (None,)),
                  hint="sequence_lens")
    lens.producer.meta[PADDED_LENGTHS] = True
    inputs = list(cell.inputs) + [None] * (5 - len(cell.inputs))
    inputs[4] = lens
    cell.inputs = inputs
    at = graph.nodes.index(cell)
    graph.nodes[at:at] = b.nodes
