"""`step-model`: one iteration of a loop as a model of its own, its state explicit.

OpenVINO's LowLatency2 idea for files: the loop's body becomes the main graph; what the loop
carried from one iteration to the next is an input (the state now) and an output (the state
next). A streaming application feeds one step's piece at a time and keeps the state between
calls. `run_steps` drives such a model over a whole input and gives the loop's outputs.

The step model's inputs, in order: the outer values the body reads (invariant inputs and
outer-scope captures that are not constants: constants are embedded), the carried state, the
step's sliced pieces, the iteration number and the incoming condition (each only where the
body reads it). Its outputs: the next state (one per carried value), one per loop output
(the value a ``Last`` output takes when this step is the last, the piece a ``Concat`` output
gets from this step), and the condition for the next step when the loop has one. The roles
and names are in the model's metadata (``itergraph.step_model``, JSON) and in `StepLayout`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, IterationLimitError, UnsupportedError, where
from ..ir.clone import clone_graph
from ..ir.graph import Graph, Node, Value
from ..ir.loop import UNBOUNDED_TRIP_COUNT, Carried, Concat, Invariant, Last, Loop, Sliced
from ..ir.types import DataType, TensorType
from ..passes.base import Pass
from ..passes.dead_ports import dead_ports
from ..passes.loop_motion import const_value
from ..shapes.infer_shapes import join

META_KEY = "itergraph.step_model"


@dataclass
class StepLayout:
    """Which input and output of a step model plays which role (names as written)."""

    loop: str
    outer: list[tuple[str, Value]] = field(default_factory=list)  # name, outer value
    state: list[tuple[str, str, Carried]] = field(default_factory=list)  # in, out, port
    pieces: list[tuple[str, Sliced]] = field(default_factory=list)
    iteration: str | None = None
    condition_in: str | None = None
    outputs: list[tuple[str, Last | Concat]] = field(default_factory=list)
    condition: str | None = None
    iteration_type: TensorType = field(default_factory=lambda: TensorType(DataType.INT64, ()))

    def as_json(self) -> str:
        return json.dumps({
            "loop": self.loop, "outer": [n for n, _ in self.outer],
            "state": [[i, o] for i, o, _ in self.state], "pieces": [n for n, _ in self.pieces],
            "iteration": self.iteration, "condition_in": self.condition_in,
            "outputs": [[n, "last" if isinstance(p, Last) else "concat"]
                        for n, p in self.outputs],
            "condition": self.condition})


class StepModel(Pass):
    """Replace the model by one iteration of one of its loops (see the module docstring).

    Applies to: the top-level canonical `Loop` named by the argument (its node name), or
    without one the only top-level loop. A loop with a precondition (TensorRT kWHILE) is
    refused (`UnsupportedError`): its step would need to stop before computing its outputs.
    The main graph becomes a copy of the loop's body: inputs and outputs as the module
    docstring lists them, each output produced by an ``Identity`` so it has its own name;
    body parameters the body does not read are not inputs; outer constants the body reads
    become initializers. Other nodes of the model are dropped.

    Returns: 1 (the model replaced).

    Guarantees: feeding step k the loop's outer values, the state of step k (the initial
    values at step 0, the previous step's next state after), the k-th piece of each sliced
    input and k as the iteration number gives the body's values of iteration k; `run_steps`
    does exactly this and returns the loop's outputs. A loop name that is not a top-level
    loop, or no name where there are several loops, is an `InputError` naming them.
    """

    name = "step_model"
    in_place = True

    def __init__(self, loop: str | None = None):
        self.loop = loop

    def __call__(self, graph: Graph) -> int:
        loop = select_loop(graph, self.loop)
        step, layout = build_step(graph, loop)
        graph.inputs, graph.outputs = step.inputs, step.outputs
        graph.nodes, graph.initializers = step.nodes, step.initializers
        graph.meta = {"metadata_props": {META_KEY: layout.as_json()}, "step_layout": layout}
        return 1


step_model = StepModel()


def select_loop(graph: Graph, name: str | None) -> Loop:
    """The top-level loop called `name`, or the only one when `name` is None."""
    top = [n for n in graph.nodes if isinstance(n, Loop)]
    if name is not None:
        for n in top:
            if n.name == name:
                return n
        raise InputError(f"step-model: no top-level loop named '{name}' (loops: "
                         f"{', '.join(repr(n.name) for n in top) or 'none'})")
    if len(top) != 1:
        raise InputError(f"step-model: the model has {len(top)} top-level loops "
                         f"({', '.join(repr(n.name) for n in top)}); name one: "
                         "step-model=<loop node name>")
    return top[0]


class _Names:
    def __init__(self):
        self.taken: set[str] = set()

    def __call__(self, hint: str) -> str:
        name, k = hint or "v", 1
        while name in self.taken:
            name, k = f"{hint}_{k}", k + 1
        self.taken.add(name)
        return name


def build_step(graph: Graph, loop: Loop) -> tuple[Graph, StepLayout]:
    """The step model of `loop` (a node of `graph`) and its layout; `graph` is unchanged."""
    if loop.precondition is not None:
        raise UnsupportedError(f"{where(loop)}: a loop with a precondition has no step model")
    body = loop.body
    names = _Names()
    layout = StepLayout(loop.name)
    mapping: dict[int, Value] = {}
    inputs: list[Value] = []
    inits: list[Value] = []
    for v in body.captures(loop.body_results()):
        c = const_value(v)
        if c is not None:
            new = Value(names(v.name or "const"), v.type, const=c)
            inits.append(new)
        else:
            new = Value(names(v.name or "outer"), v.type)
            inputs.append(new)
            layout.outer.append((new.name, v))
        mapping[v.uid] = new
    copy = clone_graph(body, mapping)
    param = {p.uid: mapping[p.uid] for p in body.inputs}
    read = {v.uid for n in copy.nodes for v in n.reads()}
    read.update(mapping[v.uid].uid for v in loop.body_results() if v.uid in mapping)

    def take(p: Value, hint: str) -> Value:
        v = param[p.uid]
        v.name = names(hint)
        inputs.append(v)
        return v

    for p in loop.input_ports:
        if isinstance(p, Invariant) and param[p.param.uid].uid in read:
            c = const_value(p.value)
            v = param[p.param.uid]
            if c is not None:
                v.name, v.const = names(p.param.name or "const"), c
                inits.append(v)
            else:
                layout.outer.append((take(p.param, p.param.name or p.value.name).name, p.value))
    outputs: list[Value] = []
    extra: list[Node] = []

    def out(result: Value, hint: str) -> str:
        v = Value(names(hint), result.type)
        extra.append(Node("Identity", [mapping.get(result.uid, result)], [v], version=1,
                          name=f"{v.name}_out"))
        outputs.append(v)
        return v.name

    for i, c in enumerate(loop.carried):
        base = c.param.name or f"state{i}"
        v = take(c.param, base)
        v.type = _state_type(c)
        layout.state.append((v.name, out(c.result, f"{base}_next"), c))
    for i, s in enumerate(loop.sliced):
        if param[s.param.uid].uid in read:
            layout.pieces.append((take(s.param, s.param.name or f"piece{i}").name, s))
    if loop.iteration_param is not None and param[loop.iteration_param.uid].uid in read:
        v = take(loop.iteration_param, loop.iteration_param.name or "iteration")
        v.type = _scalar_type(v.type, DataType.INT64)
        layout.iteration = v.name
        layout.iteration_type = v.type
    if loop.condition_param is not None and param[loop.condition_param.uid].uid in read:
        v = take(loop.condition_param, loop.condition_param.name or "condition_in")
        v.type = _scalar_type(v.type, DataType.BOOL)
        layout.condition_in = v.name
    for i, p in enumerate(loop.output_ports):
        kind = "last" if isinstance(p, Last) else "step"
        layout.outputs.append((out(p.result, f"{p.output.name or f'output{i}'}_{kind}"), p))
    if loop.condition_result is not None:
        layout.condition = out(loop.condition_result, "condition_next")
    step = Graph(f"{loop.name or 'loop'}_step", inputs, outputs, [*copy.nodes, *extra],
                 [*inits, *copy.initializers], graph.opset_imports)
    return step, layout


def _scalar_type(t, dtype: DataType) -> TensorType:
    """A special parameter's type: as the body declares it (OpenVINO's current_iteration may
    be int32, or of shape [1]) where it does, else a scalar of `dtype`."""
    if isinstance(t, TensorType) and t.dtype is not None and t.shape is not None and all(
            d == 1 for d in t.shape):
        return t
    return TensorType(dtype, ())


def _state_type(c: Carried):
    """The type a state input declares: the dims the parameter and the result agree on (a
    carried value may change shape from step to step), else the parameter's rank only."""
    t = join(c.param.type, c.result.type)
    if isinstance(t, TensorType) and t.shape is not None:
        return t
    p = c.param.type
    if isinstance(p, TensorType) and p.shape is not None:
        return TensorType(p.dtype, (None,) * len(p.shape))
    return p


def run_steps(model, feeds: dict, loop: str | None = None,
              step: Callable[[dict], dict] | None = None,
              max_iterations: int = 1_000_000) -> dict:
    """The outputs of `loop` in `model` (by output name), computed by running its step model
    one iteration at a time: `step(inputs) -> {output name: value}` (default: the step model
    on itergraph's NumPy backend; pass a function over an ONNX Runtime or OpenVINO session
    of the saved step model to drive that instead). The loop's outer values are computed
    from `feeds` by the part of `model` before the loop."""
    from ..model import Model, load

    source = load(model)
    node = select_loop(source.graph, loop)
    step_graph, layout = build_step(source.graph, node)
    if step is None:
        stepper = Model(step_graph, source.source)
        step = stepper.run
    outer = _outer_values(source, node, layout, feeds)
    return _drive(node, layout, outer, step, max_iterations)


def _outer_values(source, node: Loop, layout: StepLayout, feeds: dict) -> dict[int, object]:
    """uid -> value of every outer value the loop reads, computed from `feeds`."""
    from ..model import Model

    wanted = [node.trip_count, node.initial_condition, *(p.value for p in node.input_ports),
              *(v for _, v in layout.outer),
              *(p.length for p in node.output_ports if isinstance(p, Concat))]
    wanted = list({v.uid: v for v in wanted if v is not None}.values())
    mapping: dict[int, Value] = {}
    pro = clone_graph(source.graph, mapping)
    pro.outputs = []
    for i, v in enumerate(wanted):
        o = Value(f"__outer{i}", v.type)
        pro.nodes.append(Node("Identity", [mapping.get(v.uid, v)], [o], version=1))
        pro.outputs.append(o)
    dead_ports(pro)
    got = Model(pro, source.source).run({k: feeds[k] for k in feeds
                                          if any(x.name == k for x in pro.inputs)})
    return {v.uid: got[f"__outer{i}"] for i, v in enumerate(wanted)}


def _count(s: Sliced, x: np.ndarray) -> int:
    return s.count(x.shape[s.axis])


def _piece(s: Sliced, x: np.ndarray, k: int) -> np.ndarray:
    axis = s.axis % x.ndim
    start = s.piece_start(k, x.shape[axis])
    piece = np.take(x, np.arange(start, start + s.part_size), axis=axis)
    return piece if s.keep_axis else np.squeeze(piece, axis)


def _drive(node: Loop, layout: StepLayout, outer: dict, step, max_iterations: int) -> dict:
    trip = None
    if node.trip_count is not None:
        trip = int(np.asarray(outer[node.trip_count.uid]).reshape(()))
        if trip >= UNBOUNDED_TRIP_COUNT or (trip < 0 and node.negative_trip_count != "zero"):
            trip = None
    cond = True if node.initial_condition is None else \
        bool(np.asarray(outer[node.initial_condition.uid]).reshape(()))
    fixed = {name: outer[v.uid] for name, v in layout.outer}
    state = {i: outer[c.value.uid] for i, _, c in layout.state}
    sources = [(name, s, np.asarray(outer[s.value.uid])) for name, s in layout.pieces]
    counts = [_count(s, x) for _, s, x in sources]
    pieces: dict[str, list] = {name: [] for name, _ in layout.outputs}
    last: dict[str, object] = {}
    k = 0
    while (trip is None or k < trip) and cond and all(k < c for c in counts):
        if k >= max_iterations:
            raise IterationLimitError(f"{where(node)}: more than {max_iterations} steps")
        feed = {**fixed, **state, **{n: _piece(s, x, k) for n, s, x in sources}}
        if layout.iteration:
            t = layout.iteration_type
            feed[layout.iteration] = np.full(t.shape, k, t.dtype.numpy)
        if layout.condition_in:
            feed[layout.condition_in] = np.array(cond)
        got = step(feed)
        state = {i: got[o] for i, o, _ in layout.state}
        for name, p in layout.outputs:
            if isinstance(p, Concat):
                pieces[name].append(got[name])
            else:
                last[name] = got[name]
        if layout.condition:
            cond = bool(np.asarray(got[layout.condition]).reshape(()))
        k += 1
    return {p.output.name: _finish(node, layout, name, p, pieces, last, outer)
            for name, p in layout.outputs}


def _finish(node: Loop, layout: StepLayout, name: str, p, pieces, last, outer):
    if isinstance(p, Last):
        if name in last:
            return last[name]
        c = node.carried_for_result(p.result)
        if c is None:
            raise UnsupportedError(f"{where(node)}: output '{p.output.name}' has no value "
                                   "after zero iterations")
        return outer[c.value.uid]
    parts = [np.asarray(x) for x in pieces[name]]
    if p.reverse:
        parts.reverse()
    if not parts:
        return _empty(p)
    joined = np.stack(parts, p.axis) if p.new_axis else np.concatenate(parts, p.axis)
    if p.length is not None:
        want = int(np.asarray(outer[p.length.uid]).reshape(()))
        axis = p.axis % joined.ndim
        pad = [(0, 0)] * joined.ndim
        pad[axis] = (0, want - joined.shape[axis])
        joined = np.pad(joined, pad)
    return joined


def _empty(p: Concat) -> np.ndarray:
    """A concatenated output after zero steps: length 0 on the axis, the result's declared
    shape elsewhere (unknown dims 0), as the loop itself gives it."""
    t = p.result.type
    if not isinstance(t, TensorType) or t.shape is None:
        return np.zeros((0,), np.float32)
    dims = [d if isinstance(d, int) else 0 for d in t.shape]
    if p.new_axis:
        dims.insert(p.axis % (len(dims) + 1), 0)
    else:
        dims[p.axis % len(dims)] = 0
    return np.zeros(dims, t.dtype.numpy if t.dtype is not None else np.float32)
