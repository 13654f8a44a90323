"""Fixing a model's input shapes before it is written, as OpenVINO's ``ovc --input`` and
Polygraphy's ``--input-shapes`` do.

`fix_input_shapes(graph, shapes)` gives a copy of `graph` whose named inputs have the given
static shapes; ``infer-shapes`` then makes static what follows from them, and ``If`` nodes
whose condition became known (``Equal(Shape(x)[2], 1)``...) are replaced by the branch they
take (``inline_if``). A model whose ``If`` branches give outputs of different ranks (silero
VAD: a ``Squeeze`` when a length is 1) is then written without the ``If``, which OpenVINO's
CPU plugin refuses ("If operation with dynamic rank"). The copy computes what the original
computes for inputs of those shapes; other shapes are refused by it.
"""

from __future__ import annotations

import re

from ..errors import InputError
from ..ir.clone import clone_graph
from ..ir.graph import Graph
from ..ir.types import TensorType
from ..passes.inline_if import inline_if
from .infer_shapes import infer_shapes

_SPEC = re.compile(r"\s*([^:\[\],]+?)\s*:\s*\[([^\]]*)\]\s*(?:,|$)")


def parse_input_shapes(text: str, numbers: bool = False) -> dict[str, tuple]:
    """``"input:[1,512],sr:[]"`` -> ``{"input": (1, 512), "sr": ()}``; with `numbers`, the
    entries may be any numbers (``"x:[-1,1.5]"``: a value range)."""
    out: dict[str, tuple[int, ...]] = {}
    pos = 0
    while pos < len(text):
        m = _SPEC.match(text, pos)
        if m is None:
            raise InputError(f"cannot read input shapes '{text}' at '{text[pos:]}': expected "
                             "NAME:[D0,D1,...] separated by commas")
        dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
        if numbers:
            try:
                out[m.group(1)] = tuple(float(d) for d in dims)
            except ValueError:
                raise InputError(f"'{m.group(1)}' needs numbers: [{m.group(2)}]") from None
            pos = m.end()
            continue
        if not all(re.fullmatch(r"\d+", d) for d in dims):
            raise InputError(f"input shape of '{m.group(1)}' must be whole numbers: "
                             f"[{m.group(2)}]")
        out[m.group(1)] = tuple(int(d) for d in dims)
        pos = m.end()
    return out


def fix_input_shapes(graph: Graph, shapes: dict[str, tuple[int, ...]]) -> Graph:
    """A copy of `graph` with the inputs named in `shapes` of those static shapes, its shapes
    inferred and the ``If`` nodes decided by them inlined. An `InputError` names an input the
    model does not have, or a shape its declaration rules out."""
    by_name = {v.name: v for v in graph.inputs}
    unknown = sorted(set(shapes) - set(by_name))
    if unknown:
        raise InputError(f"the model has no input {', '.join(repr(n) for n in unknown)} "
                         f"(its inputs: {', '.join(repr(n) for n in by_name)})")
    for name, shape in shapes.items():
        t = by_name[name].type
        declared = t.shape if isinstance(t, TensorType) else None
        if declared is not None and (len(declared) != len(shape) or any(
                isinstance(d, int) and d != s for d, s in zip(declared, shape))):
            raise InputError(f"input '{name}' is declared {list(declared)}; shape "
                             f"{list(shape)} does not fit it")
        if not isinstance(t, TensorType):
            raise InputError(f"input '{name}' is not a tensor; it has no shape to fix")
    copy = clone_graph(graph)
    copy.opset_imports = dict(graph.opset_imports)
    copy.meta = dict(graph.meta)
    for v in copy.inputs:
        if v.name in shapes:
            v.type = TensorType(v.type.dtype, shapes[v.name])
    while True:
        infer_shapes(copy)
        if not inline_if(copy):
            return copy
