"""A literal reference for the canonical Loop: the pseudocode of `itergraph.ir.loop` as Python.

`reference_loop(loop, outer)` evaluates one `Loop` node as the docstring of
`itergraph/ir/loop.py` says, step by step: the trip count (``>= INT32_MAX`` unbounded, a
negative one unbounded or zero as `negative_trip_count` says), `equal_slices` (sliced inputs
of different lengths an error, empty ones a warning), the initial condition, the
per-iteration parameters (carried state, the k-th piece of each sliced input, invariant
values, the iteration number, the condition), the precondition, the condition result, and the
outputs (`Last`, and `Concat` joined or stacked on `axis`, reversed, padded to `length`).

Only the loop's body is left to itergraph, one node at a time: every node but a `Loop` runs
alone in a one-node graph on the NumPy backend; a nested `Loop` is evaluated here again.
Nothing in this file calls the backends' loop runners, so it is an oracle for them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

import itergraph as ig
from itergraph.errors import ExecutionError, IterationLimitError, LeniencyWarning
from itergraph.ir import UNBOUNDED_TRIP_COUNT, Concat, Graph, Last, Loop, Node, Sliced, Value
from itergraph.ir.clone import clone_node
from itergraph.ir.types import DataType, TensorType


def reference_loop(loop: Loop, outer: dict[Value, Any], *,
                   opset_imports: dict[str, int] | None = None,
                   max_iterations: int | None = None) -> dict[Value, Any]:
    """``{output value: result}`` of `loop`; `outer` holds every value it reads (`ir.reads`).

    `max_iterations` stops a runaway loop with `IterationLimitError`.
    """
    return Reference(opset_imports, max_iterations).loop(loop, outer)


class Reference:
    """Evaluates graphs node by node; keeps one compiled one-node model per node."""

    def __init__(self, opset_imports: dict[str, int] | None = None,
                 max_iterations: int | None = None):
        self.opset_imports = dict(opset_imports or {"": 21})
        self.max_iterations = max_iterations
        self._models: dict[int, tuple[Node, Any, list[Value]]] = {}

    # --- graphs and single nodes --------------------------------------------------------

    def graph(self, graph: Graph, env: dict[Value, Any],
              wanted: Iterable[Value] | None = None) -> dict[Value, Any]:
        """`env` extended by the values of `graph`: all of them, or those `wanted` needs."""
        env = dict(env)
        for v in graph.initializers:
            env[v] = v.const
        for n in _needed(graph, wanted):
            if isinstance(n, Loop):
                env.update(self.loop(n, env))
            else:
                env.update(self.node(n, env))
        return env

    def node(self, node: Node, env: dict[Value, Any]) -> dict[Value, Any]:
        """Run `node` alone on the NumPy backend."""
        entry = self._models.get(id(node))
        if entry is None:
            reads = node.reads()
            mapping = {v.uid: Value(f"in{j}", v.type) for j, v in enumerate(reads)}
            copy = clone_node(node, mapping)
            for i, o in enumerate(copy.outputs):
                o.name = f"out{i}"
            g = Graph(f"reference {node.op_type}", [mapping[v.uid] for v in reads],
                      copy.outputs, [copy], opset_imports=self.opset_imports)
            entry = self._models[id(node)] = (node, ig.load(g), reads)
        _, model, reads = entry
        out = model.run({f"in{j}": env[v] for j, v in enumerate(reads)}, backend="numpy")
        return dict(zip(node.outputs, out.values()))

    # --- the loop: ir/loop.py's pseudocode ----------------------------------------------

    def loop(self, loop: Loop, outer: dict[Value, Any]) -> dict[Value, Any]:
        limit = _trip_limit(loop, outer)
        cond = np.array(True) if loop.initial_condition is None else outer[loop.initial_condition]
        pieces = [(j, s, _pieces(loop, j, s, np.asarray(outer[s.value])))
                  for j, s in enumerate(loop.input_ports) if isinstance(s, Sliced)]
        if loop.equal_slices and len({len(ps) for _, _, ps in pieces}) > 1:
            raise ExecutionError(f"reference: loop '{loop.name}': sliced inputs of different "
                                 f"sequence lengths {[len(ps) for _, _, ps in pieces]}")
        if loop.equal_slices and pieces and not pieces[0][2]:
            warnings.warn(f"reference: loop '{loop.name}': sequence length zero",
                          LeniencyWarning, stacklevel=2)
        state = {c.param: outer[c.value] for c in loop.carried}
        invariant = {i.param: outer[i.value] for i in loop.invariant}
        concat_ports = [p for p in loop.output_ports if isinstance(p, Concat)]
        outs: dict[int, list] = {id(o): [] for o in concat_ports}
        wanted = loop.body_results()
        last: dict[Value, Any] | None = None  # the body's values in the last iteration
        k = 0
        while (limit is None or k < limit) and _truth(loop, cond):
            short = [(j, s, len(ps)) for j, s, ps in pieces if k >= len(ps)]
            params = {**state, **invariant}
            if not short:
                params.update({s.param: ps[k] for _, s, ps in pieces})
            if loop.iteration_param is not None:
                params[loop.iteration_param] = _as_param(k, loop.iteration_param, np.int64)
            if loop.condition_param is not None:
                params[loop.condition_param] = _as_param(cond, loop.condition_param, np.bool_)
            scope = {**outer, **params}
            if loop.precondition is not None:  # TensorRT kWHILE, tested before the slices
                pre = self.graph(loop.body, scope, [loop.precondition])[loop.precondition]
                if not _truth(loop, pre):
                    break
            if short:
                if loop.strict_slices:  # running out of a sliced input is an error
                    j, s, n = short[0]
                    raise ExecutionError(f"reference: loop '{loop.name}' iterates beyond sliced "
                                         f"input {j}, which has {n} pieces on axis {s.axis}")
                break
            if self.max_iterations is not None and k >= self.max_iterations:
                raise IterationLimitError(f"reference: loop '{loop.name}' ran past "
                                          f"{self.max_iterations} iterations")
            results = self.graph(loop.body, scope, wanted)
            for o in concat_ports:
                outs[id(o)].append(results[o.result])
            state = {c.param: results[c.result] for c in loop.carried}
            if loop.condition_result is not None:
                cond = results[loop.condition_result]
            last = results
            k += 1
        got: dict[Value, Any] = {}
        for i, p in enumerate(loop.output_ports):
            if isinstance(p, Last):
                got[p.output] = _last(loop, i, p, last, outer)
            else:
                got[p.output] = _joined(loop, i, p, outs[id(p)], outer)
        return got


def _needed(graph: Graph, wanted: Iterable[Value] | None) -> list[Node]:
    """The nodes of `graph` that the `wanted` values depend on (all nodes when None)."""
    if wanted is None:
        return list(graph.nodes)
    need = {v.uid for v in wanted}
    keep: list[Node] = []
    for n in reversed(graph.nodes):
        if any(o.uid in need for o in n.outputs):
            keep.append(n)
            need.update(v.uid for v in n.reads())
    return keep[::-1]


def _scalar(loop: Loop, what: str, x) -> np.ndarray:
    a = np.asarray(x)
    if a.size != 1:
        raise ExecutionError(f"reference: loop '{loop.name}': {what} must hold one element, "
                             f"got shape {a.shape}")
    return a.reshape(())


def _truth(loop: Loop, cond) -> bool:
    return bool(_scalar(loop, "condition", cond))


def _trip_limit(loop: Loop, outer: dict[Value, Any]) -> int | None:
    """The trip count as a bound on iterations, None when there is none."""
    if loop.trip_count is None:
        return None
    t = int(_scalar(loop, "trip count", outer[loop.trip_count]))
    if t >= UNBOUNDED_TRIP_COUNT:
        return None  # what exporters write for "unbounded"
    if t < 0:
        return None if loop.negative_trip_count == "unbounded" else 0
    return t


def _as_param(x, param: Value, default_dtype) -> np.ndarray:
    """A one-element parameter (iteration number, condition) in the type `param` declares."""
    t = param.type
    dtype = default_dtype
    shape: tuple = ()
    if isinstance(t, TensorType):
        if t.dtype is not None:
            dtype = DataType(t.dtype).numpy
        if t.shape is not None:
            shape = (1,) * len(t.shape)
    return np.asarray(x).astype(dtype).reshape(shape)


def _pieces(loop: Loop, j: int, s: Sliced, x: np.ndarray) -> list[np.ndarray]:
    """Every piece of sliced input `j`, from the fence posts, stride and part size."""
    axis = s.axis + x.ndim if s.axis < 0 else s.axis
    if not 0 <= axis < x.ndim:
        raise ExecutionError(f"reference: loop '{loop.name}': sliced input {j} has axis "
                             f"{s.axis}, out of range for rank {x.ndim}")
    dim = x.shape[axis]
    if s.keep_axis and s.start == 0 and s.end == -1 and dim % s.part_size:
        raise ExecutionError(f"reference: loop '{loop.name}': sliced input {j}: axis {axis} of "
                             f"length {dim} is not divisible by part_size {s.part_size}")

    def resolve(post: int) -> int:  # -1 is the end of the axis (post dim)
        return post if post >= 0 else dim + 1 + post

    lo, hi = sorted((resolve(s.start), resolve(s.end)))
    lo, hi = max(lo, 0), min(hi, dim)  # posts beyond the axis stop at its ends
    size, step = s.part_size, abs(s.stride)
    count = (hi - lo - size) // step + 1 if hi - lo >= size else 0
    pieces = []
    for k in range(count):
        first = lo + k * step if s.stride > 0 else hi - k * step - size
        index = [slice(None)] * x.ndim
        index[axis] = slice(first, first + size)
        piece = x[tuple(index)]
        pieces.append(piece if s.keep_axis else np.squeeze(piece, axis))
    return pieces


def _last(loop: Loop, i: int, p: Last, last: dict[Value, Any] | None,
          outer: dict[Value, Any]) -> Any:
    """Value of `p.result` in the last iteration; after none, the carried initial value (or
    the outer value itself, for a result read from outside the body)."""
    if last is not None:
        return last[p.result]
    carried = loop.carried_for_result(p.result)
    if carried is not None:
        return outer[carried.value]
    if p.result in outer:
        return outer[p.result]
    raise ExecutionError(f"reference: loop '{loop.name}': output {i} has no value after zero "
                         "iterations")


def _joined(loop: Loop, i: int, p: Concat, entries: list, outer: dict[Value, Any]):
    """The per-iteration values of `p.result`, reversed, padded and joined as `p` says."""
    entries = [np.asarray(e) for e in entries]
    if p.reverse:
        entries = entries[::-1]
    if p.length is not None:
        n = int(_scalar(loop, f"length of output {i}", outer[p.length]))
        if n < len(entries):
            raise ExecutionError(f"reference: loop '{loop.name}': output {i} has length {n}, "
                                 f"below the {len(entries)} iterations")
        zero = np.zeros_like(entries[0]) if entries else _declared_zero(p.result)
        entries += [zero] * (n - len(entries))
    if entries:
        return np.stack(entries, p.axis) if p.new_axis else np.concatenate(entries, p.axis)
    zero = _declared_zero(p.result)  # no entries: the declared entry shape, unknown dims 0
    shape = list(zero.shape)
    if p.new_axis:
        shape.insert(_norm(p.axis, zero.ndim + 1), 0)
    else:
        shape[_norm(p.axis, zero.ndim)] = 0
    return np.zeros(shape, zero.dtype)


def _norm(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _declared_zero(v: Value) -> np.ndarray:
    """A zero entry of the type `v` declares (unknown dims 0; float32 when not declared)."""
    t = v.type
    dtype, shape = np.dtype(np.float32), ()
    if isinstance(t, TensorType):
        if t.dtype is not None:
            dtype = DataType(t.dtype).numpy
        if t.shape is not None:
            shape = tuple(d if isinstance(d, int) else 0 for d in t.shape)
    return np.zeros(shape, dtype)
