"""Structural checks of a graph. `verify` raises `ModelError` naming what is wrong.

Checked, at every depth: each node input is defined before use (in this graph, earlier, or in
an enclosing scope); every value is produced once in the whole model; graph outputs are
defined; loop ports bind outer values to body parameters and body results that exist, each
body parameter exactly once (a port, the iteration or the condition parameter); sliced ports
have a non-zero stride and a positive part size (1 when they drop their axis); a concat
length is an outer value; a loop's flags have values its meaning defines.
"""

from __future__ import annotations

from ..errors import ModelError, where
from .graph import Graph, Value
from .loop import Carried, Concat, Loop, Sliced

#: The `Loop` flags whose values `verify` checks (`ir.loop.loop_flags`: every one).
HANDLES_LOOP_FLAGS = frozenset({"negative_trip_count", "strict_slices", "equal_slices"})
IGNORES_LOOP_FLAGS: dict[str, str] = {}

def verify(graph: Graph) -> None:
    _verify(graph, set(), set())


def _name(v: Value) -> str:
    return v.name or f"<value {v.uid}>"


def _verify(graph: Graph, outer: set[int], seen: set[int]) -> None:
    """`outer`: values visible from enclosing scopes; `seen`: values defined so far anywhere
    (SSA: a value has one definition in the whole model, not one per scope)."""
    avail = set(outer)

    def define(v: Value, what: str) -> None:
        if v.uid in seen:
            raise ModelError(f"graph '{graph.name}': value '{_name(v)}' is defined twice ({what})")
        seen.add(v.uid)
        avail.add(v.uid)

    for v in graph.inputs:
        define(v, "graph input")
    for v in graph.initializers:
        if v.const is None:
            raise ModelError(f"graph '{graph.name}': initializer '{_name(v)}' has no data")
        define(v, "initializer")
    for n in graph.nodes:
        if isinstance(n, Loop):  # first: its port rules name a misplaced input more precisely
            _verify_loop(n, avail)
        for i, v in enumerate(n.inputs):
            if v is not None and v.uid not in avail:
                raise ModelError(
                    f"{where(n)} in graph '{graph.name}': input {i} '{_name(v)}' is not defined "
                    "before use (not a graph input, initializer, earlier output, or outer value)"
                )
        for g in n.subgraphs():
            _verify(g, avail, seen)
        for v in n.outputs:
            define(v, f"output of {where(n)}")
    for i, v in enumerate(graph.outputs):
        if v.uid not in avail:
            raise ModelError(f"graph '{graph.name}': output {i} '{_name(v)}' is not defined")


def _verify_loop(loop: Loop, outer: set[int]) -> None:
    body = loop.body
    params = {v.uid for v in body.inputs}
    body_values = body.defined()
    reachable = body_values | outer

    def need_param(v: Value | None, what: str) -> None:
        if v is not None and v.uid not in params:
            raise ModelError(f"{where(loop)}: {what} '{_name(v)}' is not a parameter of its body")

    def need_result(v: Value | None, what: str) -> None:
        if v is not None and v.uid not in reachable:
            raise ModelError(f"{where(loop)}: {what} '{_name(v)}' is not a value of its body")

    _verify_flags(loop)
    need_param(loop.iteration_param, "iteration parameter")
    need_param(loop.condition_param, "condition parameter")
    need_result(loop.condition_result, "condition result")
    need_result(loop.precondition, "precondition")
    bound: set[int] = set()

    def bind(v: Value) -> None:
        if v.uid in bound:
            raise ModelError(f"{where(loop)}: body parameter '{_name(v)}' is bound twice")
        bound.add(v.uid)

    for v in (loop.iteration_param, loop.condition_param):
        if v is not None:
            bind(v)
    for i, p in enumerate(loop.input_ports):
        need_param(p.param, f"input port {i} parameter")
        bind(p.param)
        if isinstance(p, Carried):
            need_result(p.result, f"carried port {i} result")
        if isinstance(p, Sliced):
            if p.stride == 0:
                raise ModelError(f"{where(loop)}: sliced input {i} has stride 0")
            if p.part_size < 1:
                raise ModelError(f"{where(loop)}: sliced input {i} has part_size {p.part_size}")
            if not p.keep_axis and p.part_size != 1:
                raise ModelError(
                    f"{where(loop)}: sliced input {i} drops its axis but part_size != 1")
    for v in body.inputs:
        if v.uid not in bound:
            raise ModelError(f"{where(loop)}: body parameter '{_name(v)}' is bound to nothing "
                             "(no input port, not the iteration or condition parameter)")
    for i, p in enumerate(loop.output_ports):
        need_result(p.result, f"output port {i} result")
        if isinstance(p, Concat) and p.length is not None and p.length.uid not in outer:
            raise ModelError(f"{where(loop)}: length of output {i} ('{_name(p.length)}') "
                             "must be defined outside the loop")


def _verify_flags(loop: Loop) -> None:
    """`negative_trip_count` is "unbounded" or "zero"; `strict_slices` and `equal_slices`
    are booleans (a pass that sets one from an array would make its meaning ambiguous)."""
    if loop.negative_trip_count not in ("unbounded", "zero"):
        raise ModelError(f"{where(loop)}: negative_trip_count must be 'unbounded' or 'zero', "
                         f"not {loop.negative_trip_count!r}")
    for name, value in (("strict_slices", loop.strict_slices),
                        ("equal_slices", loop.equal_slices)):
        if not isinstance(value, bool):
            raise ModelError(f"{where(loop)}: {name} must be a bool, not {value!r}")
