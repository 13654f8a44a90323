"""Human-readable summaries of a graph: its inputs, outputs and the tree of loops."""

from __future__ import annotations

from .ir import Carried, Concat, Graph, Invariant, Last, Loop, Sliced, Value
from .ir.graph import ONNX_DOMAIN
from .ir.state import has_state, variables
from .ir.static_values import const_value
from .ir.types import TensorType


def _value(v: Value | None) -> str:
    if v is None:
        return "-"
    return f"{v.name or '<unnamed>'}: {v.type or '?'}"


def _const_or_name(v: Value | None) -> str:
    if v is None:
        return "none"
    c = const_value(v)
    if c is not None and c.size == 1:
        return str(c.reshape(-1)[0].item())
    return f"runtime value '{v.name}'"


def _trip_count(v: Value | None) -> str:
    """The trip count; a constant that bounds nothing (OpenVINO's -1, PyTorch's INT64_MAX)
    reads as no limit."""
    c = const_value(v) if v is not None else None
    if c is not None and c.size == 1 and c.dtype.kind in "iu":
        n = int(c.reshape(-1)[0])
        if n < 0 or n >= 2**63 - 1:
            return f"none (constant {n}: runs until the condition is false)"
    return _const_or_name(v)


def sliced_range(p: Sliced) -> str:
    """The sliced range in Python's terms (`Sliced` keeps OpenVINO's fence posts, where -1 is
    the end of the axis)."""
    def index(post: int) -> str:
        return "" if post == -1 else str(post + 1) if post < -1 else str(post)

    lo, hi = sorted((p.start, p.end), key=lambda f: (f < 0, f))
    if (lo, hi) == (0, -1):
        span = "the whole axis"
    else:
        span = f"[{index(lo)}:{index(hi)}]"
    step = abs(p.stride)
    return span + (f" every {step}" if step != 1 else "")


def describe_port(p) -> str:
    if isinstance(p, Invariant):
        return f"invariant  {p.param.name} <- {p.value.name}"
    if isinstance(p, Carried):
        return f"carried    {p.param.name} <- {p.value.name}, next = {p.result.name}"
    if isinstance(p, Sliced):
        direction = "reverse" if p.reverse else "forward"
        extra = f", part_size {p.part_size}, keeps axis" if p.keep_axis else ""
        return (f"sliced     {p.param.name} <- {p.value.name} axis {p.axis} {direction}, "
                f"{sliced_range(p)}{extra}")
    if isinstance(p, Last):
        return f"last       {p.output.name} <- {p.result.name}"
    if isinstance(p, Concat):
        how = "stacked on new axis" if p.new_axis else "joined on axis"
        rev = ", reversed" if p.reverse else ""
        ln = f", padded to {p.length.name}" if p.length is not None else ""
        return f"concat     {p.output.name} <- {p.result.name} {how} {p.axis}{rev}{ln}"
    return repr(p)


def describe_loop(loop: Loop, indent: str) -> list[str]:
    lines = [f"{indent}Loop '{loop.name or '<unnamed>'}' (from {loop.origin or 'itergraph'})"]
    sub = indent + "    "
    lines.append(f"{sub}trip count: {_trip_count(loop.trip_count)}")
    conds = []
    if loop.initial_condition is not None:
        conds.append(f"initial {_const_or_name(loop.initial_condition)}")
    if loop.condition_result is not None:
        conds.append(f"next from '{loop.condition_result.name}'")
    if loop.precondition is not None:
        conds.append(f"checked before each iteration from '{loop.precondition.name}'")
    lines.append(f"{sub}condition: {', '.join(conds) or 'none'}")
    if loop.iteration_param is not None:
        lines.append(f"{sub}iteration number -> {loop.iteration_param.name}")
    for p in loop.input_ports:
        lines.append(f"{sub}in   {describe_port(p)}")
    for p in loop.output_ports:
        lines.append(f"{sub}out  {describe_port(p)}")
    lines.extend(describe_nested(loop.body, sub))
    return lines


def describe_nested(graph: Graph, indent: str) -> list[str]:
    lines: list[str] = []
    for n in graph.nodes:
        if isinstance(n, Loop):
            lines.extend(describe_loop(n, indent))
        elif n.subgraphs():
            inner = [ln for g in n.subgraphs() for ln in describe_nested(g, indent + "    ")]
            if inner:
                lines.append(f"{indent}{n.op_type} '{n.name or '<unnamed>'}'")
                lines.extend(inner)
    return lines


def _variable(var) -> str:
    init = f"init '{var.init.name}'" if var.init is not None else "init zeros"
    assign = f"assigned '{var.assign.inputs[0].name}'" if var.assign is not None \
        else "never assigned"
    return f"{var.id}: {var.type}, {init}, {assign}"


def describe(graph: Graph) -> str:
    """Inputs, outputs and the loop tree of `graph`, as text."""
    lines = [f"graph '{graph.name}'"]
    if graph.opset_imports:
        # the canonical loop's own domain is internal: a user's file never imports it
        lines.append("opsets: " + ", ".join(f"{d or ONNX_DOMAIN} {v}" for d, v in
                                            sorted(graph.opset_imports.items())
                                            if d != "itergraph"))
    lines.append("inputs:")
    lines += [f"    {_value(v)}" for v in graph.inputs if v.const is None]
    lines.append("outputs:")
    lines += [f"    {_value(v)}" for v in graph.outputs]
    if has_state(graph):
        lines.append("variables (kept between runs):")
        lines += [f"    {_variable(var)}" for var in variables(graph).values()]
    tree = describe_nested(graph, "    ")
    lines.append("loops:" if tree else "loops: none")
    lines += tree
    counts: dict[str, int] = {}
    for _, n in graph.walk():
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    lines.append("ops: " + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
    return "\n".join(lines)


def _type_dict(t) -> dict:
    if isinstance(t, TensorType):
        return {"kind": "tensor", "dtype": t.dtype.value if t.dtype is not None else None,
                "shape": None if t.shape is None else
                [d if isinstance(d, int) else (d if isinstance(d, str) else None)
                 for d in t.shape]}
    return {"kind": "other", "text": str(t)}


def _loop_dict(loop: Loop) -> dict:
    return {"name": loop.name, "origin": loop.origin,
            "trip_count": _trip_count(loop.trip_count),
            "inputs": [describe_port(p) for p in loop.input_ports],
            "outputs": [describe_port(p) for p in loop.output_ports],
            "loops": _nested_dicts(loop.body)}


def _nested_dicts(graph: Graph) -> list[dict]:
    out: list[dict] = []
    for n in graph.nodes:
        if isinstance(n, Loop):
            out.append(_loop_dict(n))
        else:
            for g in n.subgraphs():
                out.extend(_nested_dicts(g))
    return out


def describe_dict(graph: Graph) -> dict:
    """What `describe` says, as plain data (``itergraph info --json``)."""
    counts: dict[str, int] = {}
    for _, n in graph.walk():
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    return {"graph": graph.name,
            "opsets": {d or ONNX_DOMAIN: v for d, v in sorted(graph.opset_imports.items())
                       if d != "itergraph"},
            "inputs": [{"name": v.name, **_type_dict(v.type)} for v in graph.inputs
                       if v.const is None],
            "outputs": [{"name": v.name, **_type_dict(v.type)} for v in graph.outputs],
            "loops": _nested_dicts(graph), "ops": dict(sorted(counts.items()))}


__all__ = ["describe", "describe_dict", "describe_loop", "describe_port"]
