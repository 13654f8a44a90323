"""Carried values whose later shape breaks what an If in the loop body was declared to give:
ONNX Runtime sizes an If's outputs from the shapes the body declares, so such a loop fails
there from its second iteration (the rule ``carried-shape-breaks-if-output``)."""

from __future__ import annotations

from ..analysis.loop_features import shape_of, through_identity
from ..ir.graph import Graph, Value
from ..ir.loop import Carried, Loop
from ..ir.types import TensorType


def _typed_body(loop: Loop, c: Carried, t, opset: int) -> tuple[Graph, dict[int, Value]]:
    """A copy of `loop`'s body inferred with `c`'s parameter of type `t` (None: as the file
    declares it); with `t`, the types of what the body computes from the parameter are
    dropped first and inferred anew. Returns (body copy, uid -> copied value)."""
    from ..ir.clone import clone_graph
    from ..shapes.infer_shapes import infer_graph

    mapping: dict[int, Value] = {}
    body = clone_graph(loop.body, mapping)
    p = mapping[c.param.uid]
    if t is not None:
        p.type = t
        seen = {p.uid}
        for _, n in body.walk():  # pre-order: a producer comes before its readers
            if any(v.uid in seen for v in n.reads()):
                for v in n.outputs:
                    seen.add(v.uid)
                    if isinstance(v.type, TensorType):
                        v.type = TensorType(v.type.dtype, None)
    infer_graph(body, opset)
    return body, mapping


def _branch_outputs(body: Graph) -> dict[str, tuple[str, object]]:
    """name -> (branch, shape) of every If branch output in `body` at any depth."""
    out = {}
    for _, n in body.walk():
        if n.op_type != "If" or n.domain != "":
            continue
        for attr in ("then_branch", "else_branch"):
            g = n.attrs.get(attr)
            if isinstance(g, Graph):
                for v in g.outputs:
                    out[v.name] = (attr, shape_of(v))
    return out


def _later_shapes(c: Carried, copied: dict[int, Value]) -> list[tuple]:
    """The shapes `c`'s body result may have (its own, or each branch's when an If makes
    it), as inferred in the body copy `copied`."""
    r = copied.get(c.result.uid, c.result)
    p = through_identity(r).producer
    if p is not None and p.op_type == "If" and p.domain == "":
        shapes = [shape_of(g.outputs[r.index]) for g in p.subgraphs()
                  if r.index < len(g.outputs)]
    else:
        shapes = [shape_of(r)]
    return [s for s in shapes if s is not None]


def _static(s) -> bool:
    return s is not None and all(isinstance(d, int) for d in s)


def shape_breaking_carried(loop: Loop, opset: int) -> list[tuple[Carried, tuple, tuple, list]]:
    """Carried values whose shape leaves the body other than the body declares it, read by
    an If whose output ONNX Runtime allocates before running the branch: (carried, declared
    shape, a later shape, [(branch output name, branch, shape)]).

    ONNX Runtime infers the body once, from the body's declared input types (not the
    initial values'). An If hands a branch an output buffer of the shape inferred for that
    branch output when that shape is fully static (`if.cc`, ``AllocationType::IfOutput``);
    the branch fails in the iteration that computes another shape from the changed carried
    value. Listed are the branch outputs whose shape is fully static from the declared
    shape and another (or unknown) when the carried value has the later shape (a changed
    rank, or a static dimension that changes)."""
    out: list[tuple[Carried, tuple, tuple, list]] = []
    if not any(n.op_type == "If" and n.domain == "" for _, n in loop.body.walk()):
        return out
    for c in loop.carried:
        declared = shape_of(c.param)
        if c.result is None or c.result is c.param or declared is None:
            continue
        body, copied = _typed_body(loop, c, None, opset)
        for later in _later_shapes(c, copied):
            if len(later) != len(declared):
                general = (None,) * len(later)
            elif any(isinstance(d, int) and d != e for d, e in zip(declared, later)):
                general = tuple(d if d == e else None for d, e in zip(declared, later))
            else:
                continue
            first = _branch_outputs(body)
            dtype = c.param.type.dtype if isinstance(c.param.type, TensorType) else None
            then = _branch_outputs(_typed_body(loop, c, TensorType(dtype, general), opset)[0])
            bad = [(name, branch, s) for name, (branch, s) in first.items()
                   if _static(s) and then.get(name, (branch, None))[1] != s]
            if bad:
                out.append((c, declared, later, bad))
                break
    return out
