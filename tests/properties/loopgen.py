"""Random ONNX Loop and Scan models for the property tests, and the runners that compare them.

A model is described by a small frozen spec (`LoopSpec`, `ScanSpec`, `StepSpec`) that
hypothesis draws; `build` turns a spec into an `onnx.ModelProto` and `feeds` gives its inputs.
The specs keep shapes to a handful of choices so that the JAX backend, which compiles once
per model and shape, stays fast.

Loop models always carry an iteration counter `n` (and, when nested, return the inner loop's
counter per outer iteration as the scan output `inner_n`), so the number of iterations every
loop needed can be read off a reference run: that is what the `max_iterations` property uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from onnx import helper as h

from onnx_builders import I64, B, F, body, const, model, vi

SHAPES = ((), (3,), (2, 3))
INT64_MAX = np.iinfo(np.int64).max


def bounded(examples: int) -> settings:
    """A fixed, reproducible set of `examples`: no deadline (JAX compiles on first use) and
    no example database (nothing written into the tree)."""
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------- Loop


@dataclass(frozen=True)
class LoopSpec:
    """ONNX Loop(M?, cond?, x0, [y0], n0) with carried x (and y) and an iteration counter n.

    Body: ``x' = x + step + 0.25 i [+ 0.125 z]`` where z is an inner Loop's result when
    `inner_trip` is set; ``y' = 0.5 (y + x')``; ``n' = n + 1``. The body's condition is
    ``stop``: ``"never"`` (passes cond through), ``"count"`` (``i + 1 < K``) or ``"value"``
    (``sum(x') < limit``). `scans` names the per-iteration outputs (``"x"``, ``"i"``, ``"y"``).
    """

    shape: tuple
    trip: int | None  # M (INT64_MAX: unbounded), or None: no trip-count input
    cond0: bool | None  # initial condition, or None: no condition input
    stop: str
    stop_at: int  # K for "count"; the limit for "value"
    second: bool  # carry y too
    scans: tuple[str, ...]
    inner_trip: int | None = None  # nested Loop's trip count (None: not nested)
    inner_stop: int | None = None  # nested Loop stops after this many iterations (None: never)
    opset: int = 21

    @property
    def terminates(self) -> bool:
        """Whether the loop ends without `max_iterations`. The body's condition ends it
        even when the Loop has no condition input, as in ONNX Runtime (the ONNX text calls
        it ignored there)."""
        counted = self.trip is not None and self.trip < INT64_MAX
        return counted or self.stop != "never" or self.cond0 is False


def _inner_loop(spec: LoopSpec) -> list:
    """Nodes computing z = x_in + N2 * step (an inner Loop over j, counting its iterations)."""
    stop = (h.make_node("Less", ["j1", "K2"], ["d_out"]) if spec.inner_stop is not None
            else h.make_node("Identity", ["d_in"], ["d_out"]))
    shape = list(spec.shape)
    inner = body(
        [h.make_node("Add", ["z_in", "step"], ["z_out"]),
         h.make_node("Add", ["m_in", "one_i"], ["m_out"]),
         h.make_node("Add", ["j", "one_i"], ["j1"]), stop],
        [vi("j", I64, []), vi("d_in", B, []), vi("z_in", F, shape), vi("m_in", I64, [])],
        [vi("d_out", B, []), vi("z_out", F, shape), vi("m_out", I64, [])], name="inner_body")
    return [h.make_node("Loop", ["N2", "true", "x_in", "zero_i"], ["z", "m"], body=inner,
                        name="inner")]


def build_loop(spec: LoopSpec):
    shape = list(spec.shape)
    nodes = [h.make_node("Cast", ["i"], ["fi"], to=F),
             h.make_node("Mul", ["fi", "quarter"], ["qi"]),
             h.make_node("Add", ["x_in", "step"], ["xa"]),
             h.make_node("Add", ["xa", "qi"], ["xb" if spec.inner_trip is not None else "x_out"])]
    if spec.inner_trip is not None:
        nodes += _inner_loop(spec)
        nodes += [h.make_node("Mul", ["z", "eighth"], ["z8"]),
                  h.make_node("Add", ["xb", "z8"], ["x_out"]),
                  h.make_node("Identity", ["m"], ["inner_n"])]
    nodes.append(h.make_node("Add", ["n_in", "one_i"], ["n_out"]))
    if spec.second:
        nodes += [h.make_node("Add", ["y_in", "x_out"], ["ya"]),
                  h.make_node("Mul", ["ya", "half"], ["y_out"])]
    if spec.stop == "never":
        nodes.append(h.make_node("Identity", ["c_in"], ["c_out"]))
    elif spec.stop == "count":
        nodes += [h.make_node("Add", ["i", "one_i"], ["i1"]),
                  h.make_node("Less", ["i1", "K"], ["c_out"])]
    else:
        nodes += [h.make_node("ReduceSum", ["x_out"], ["sx"], keepdims=0),
                  h.make_node("Less", ["sx", "limit"], ["c_out"])]
    scan_src = {"x": ("x_out", F, shape), "i": ("fi", F, []), "y": ("y_out", F, shape)}
    scan_out = []
    for k, name in enumerate(spec.scans):
        src, elem, sh = scan_src[name]
        nodes.append(h.make_node("Identity", [src], [f"scan{k}"]))
        scan_out.append((f"scan{k}", elem, sh))
    if spec.inner_trip is not None:
        scan_out.append(("inner_n", I64, []))
    carried_in = [vi("x_in", F, shape)] + ([vi("y_in", F, shape)] if spec.second else [])
    carried_in.append(vi("n_in", I64, []))
    carried_out = [vi("x_out", F, shape)] + ([vi("y_out", F, shape)] if spec.second else [])
    carried_out.append(vi("n_out", I64, []))
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), *carried_in],
             [vi("c_out", B, []), *carried_out, *[vi(n, e, s) for n, e, s in scan_out]],
             [const("one_i", 1), const("quarter", 0.25, np.float32),
              *([const("eighth", 0.125, np.float32)] if spec.inner_trip is not None else []),
              *([const("half", 0.5, np.float32)] if spec.second else [])])
    loop_in = ["M" if spec.trip is not None else "", "cond" if spec.cond0 is not None else "",
               "x0", *(["y0"] if spec.second else []), "zero_i"]
    carried_names = ["x", *(["y"] if spec.second else []), "n"]
    outs = carried_names + [f"{n}s" for n, _, _ in scan_out]
    graph_in = [*([vi("M", I64, [])] if spec.trip is not None else []),
                *([vi("cond", B, [])] if spec.cond0 is not None else []),
                vi("x0", F, shape), *([vi("y0", F, shape)] if spec.second else []),
                vi("step", F, shape)]
    if spec.stop == "count":
        graph_in.append(vi("K", I64, []))
    if spec.stop == "value":
        graph_in.append(vi("limit", F, []))
    if spec.inner_trip is not None:
        graph_in.append(vi("N2", I64, []))
        if spec.inner_stop is not None:
            graph_in.append(vi("K2", I64, []))
    graph_out = [vi("x", F, shape), *([vi("y", F, shape)] if spec.second else []),
                 vi("n", I64, []), *[vi(f"{n}s", e, [None, *s]) for n, e, s in scan_out]]
    inits = [const("zero_i", 0)]
    if spec.inner_trip is not None:
        inits.append(const("true", True))
    return model([h.make_node("Loop", loop_in, outs, body=b, name="outer")], graph_in,
                 graph_out, inits, opset=spec.opset)


def loop_feeds(spec: LoopSpec, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    f = {}
    if spec.trip is not None:
        f["M"] = np.array(spec.trip, np.int64)
    if spec.cond0 is not None:
        f["cond"] = np.array(spec.cond0)
    f["x0"] = rng.uniform(0, 1, spec.shape).astype(np.float32)
    if spec.second:
        f["y0"] = rng.uniform(-1, 1, spec.shape).astype(np.float32)
    f["step"] = rng.uniform(0.5, 1.5, spec.shape).astype(np.float32)
    if spec.stop == "count":
        f["K"] = np.array(spec.stop_at, np.int64)
    if spec.stop == "value":
        f["limit"] = np.array(spec.stop_at * max(1, int(np.prod(spec.shape))), np.float32)
    if spec.inner_trip is not None:
        f["N2"] = np.array(spec.inner_trip, np.int64)
        if spec.inner_stop is not None:
            f["K2"] = np.array(spec.inner_stop, np.int64)
    return f


@st.composite
def loop_specs(draw, terminating: bool = True, shapes=SHAPES) -> LoopSpec:
    shape = draw(st.sampled_from(shapes))
    trip = draw(st.one_of(st.none(), st.integers(0, 6), st.just(INT64_MAX)))
    cond0 = draw(st.one_of(st.none(), st.booleans()))
    stop = draw(st.sampled_from(["never", "count", "value"]))
    stop_at = draw(st.integers(0, 7))
    nested = draw(st.booleans())
    spec = LoopSpec(
        shape=shape, trip=trip, cond0=cond0, stop=stop, stop_at=stop_at,
        second=draw(st.booleans()),
        scans=tuple(draw(st.lists(st.sampled_from(["x", "i", "y"]), max_size=2))),
        inner_trip=draw(st.integers(0, 3)) if nested else None,
        inner_stop=draw(st.one_of(st.none(), st.integers(0, 3))) if nested else None,
        opset=draw(st.sampled_from([13, 16, 21])))
    if "y" in spec.scans and not spec.second:
        spec = LoopSpec(**{**spec.__dict__, "second": True})
    if terminating and not spec.terminates:
        spec = LoopSpec(**{**spec.__dict__, "trip": stop_at})
    return spec


# ----------------------------------------------------------------------------- Scan


@dataclass(frozen=True)
class ScanSpec:
    """ONNX Scan over `length` steps: scan inputs X_j (element shape `elem`, scanned along
    `in_axes[j]` in direction `in_dirs[j]`), states s0 (and s1), scan outputs `outs` made of
    ``(source, axis, direction)``; `nested` adds an inner Scan over the element's first axis.

    Body: ``acc = s0 + x0_t [+ 0.5 x1_t] [+ inner]``, ``s0' = 0.5 acc``,
    ``s1' = max(s1, x0_t)``; sources: ``"acc"``, ``"diff"`` (x0_t - s0), ``"s1"``.
    """

    length: int
    elem: tuple
    in_axes: tuple[int, ...]
    in_dirs: tuple[int, ...]
    states: int  # 1 or 2
    outs: tuple[tuple[str, int, int], ...]
    nested: bool = False
    opset: int = 21

    def input_shape(self, j: int) -> tuple:
        rank = len(self.elem) + 1
        axis = self.in_axes[j] % rank
        return (*self.elem[:axis], self.length, *self.elem[axis:])

    def output_shape(self, k: int) -> tuple:
        rank = len(self.elem) + 1
        axis = self.outs[k][1] % rank
        return (*self.elem[:axis], self.length, *self.elem[axis:])


def _inner_scan(spec: ScanSpec) -> list:
    """Nodes computing `us` (shape elem): the running sum of x0_t along its first axis."""
    sub = list(spec.elem[1:])
    inner = body(
        [h.make_node("Add", ["u_in", "e"], ["u_out"]),
         h.make_node("Identity", ["u_out"], ["u_t"])],
        [vi("u_in", F, sub), vi("e", F, sub)], [vi("u_out", F, sub), vi("u_t", F, sub)],
        name="inner_body")
    return [h.make_node("Gather", ["x0_t", "zero_i"], ["x00"], axis=0),
            h.make_node("Mul", ["x00", "zero_f"], ["u0"]),
            h.make_node("Scan", ["u0", "x0_t"], ["u_last", "us"], body=inner,
                        num_scan_inputs=1, name="inner")]


def build_scan(spec: ScanSpec):
    elem = list(spec.elem)
    nin = len(spec.in_axes)
    nodes = [h.make_node("Add", ["s0_in", "x0_t"], ["acc0"])]
    last = "acc0"
    if nin == 2:
        nodes += [h.make_node("Mul", ["x1_t", "half"], ["hx1"]),
                  h.make_node("Add", [last, "hx1"], ["acc1"])]
        last = "acc1"
    if spec.nested:
        nodes += _inner_scan(spec)
        nodes.append(h.make_node("Add", [last, "us"], ["acc2"]))
        last = "acc2"
    nodes += [h.make_node("Identity", [last], ["acc"]),
              h.make_node("Mul", ["acc", "half"], ["s0_out"]),
              h.make_node("Sub", ["x0_t", "s0_in"], ["diff"])]
    if spec.states == 2:
        nodes.append(h.make_node("Max", ["s1_in", "x0_t"], ["s1_out"]))
    for k, (src, _, _) in enumerate(spec.outs):
        nodes.append(h.make_node("Identity", [src if src != "s1" else "s1_out"], [f"o{k}"]))
    states = ["s0", "s1"][:spec.states]
    b = body(nodes, [*[vi(f"{s}_in", F, elem) for s in states],
                     *[vi(f"x{j}_t", F, elem) for j in range(nin)]],
             [*[vi(f"{s}_out", F, elem) for s in states],
              *[vi(f"o{k}", F, elem) for k in range(len(spec.outs))]],
             [const("half", 0.5, np.float32),
              *([const("zero_f", 0.0, np.float32), const("zero_i", 0)] if spec.nested else [])])
    attrs = dict(num_scan_inputs=nin, scan_input_axes=list(spec.in_axes),
                 scan_input_directions=list(spec.in_dirs),
                 scan_output_axes=[a for _, a, _ in spec.outs],
                 scan_output_directions=[d for _, _, d in spec.outs])
    scan = h.make_node("Scan", [*[f"{s}_init" for s in states],
                                *[f"X{j}" for j in range(nin)]],
                       [*[f"{s}_final" for s in states], *[f"Y{k}" for k in range(len(spec.outs))]],
                       body=b, name="scan", **attrs)
    rank = len(elem) + 1
    return model([scan],
                 [*[vi(f"{s}_init", F, elem) for s in states],
                  *[vi(f"X{j}", F, list(spec.input_shape(j))) for j in range(nin)]],
                 [*[vi(f"{s}_final", F, elem) for s in states],
                  *[vi(f"Y{k}", F, [None] * rank) for k in range(len(spec.outs))]],
                 opset=spec.opset)


def scan_feeds(spec: ScanSpec, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    f = {f"s{k}_init": rng.uniform(-1, 1, spec.elem).astype(np.float32)
         for k in range(spec.states)}
    for j in range(len(spec.in_axes)):
        f[f"X{j}"] = rng.uniform(-1, 1, spec.input_shape(j)).astype(np.float32)
    return f


def empty_scan_result(spec: ScanSpec, feeds: dict) -> dict:
    """What a Scan over zero steps returns: the initial states and empty scan outputs."""
    out = {f"s{k}_final": feeds[f"s{k}_init"] for k in range(spec.states)}
    for k in range(len(spec.outs)):
        out[f"Y{k}"] = np.zeros(spec.output_shape(k), np.float32)
    return out


@st.composite
def scan_specs(draw) -> ScanSpec:
    elem = draw(st.sampled_from([(2,), (2, 3)]))
    rank = len(elem) + 1
    opset = draw(st.sampled_from([9, 11, 16, 21]))
    lo = -rank if opset >= 11 else 0  # negative axes exist from Scan-11
    nin = draw(st.integers(1, 2))
    axis = st.integers(lo, rank - 1)
    outs = tuple(draw(st.lists(st.tuples(st.sampled_from(["acc", "diff", "s1"]), axis,
                                         st.integers(0, 1)), min_size=1, max_size=2)))
    return ScanSpec(
        length=draw(st.integers(0, 4)), elem=elem,
        in_axes=tuple(draw(axis) for _ in range(nin)),
        in_dirs=tuple(draw(st.integers(0, 1)) for _ in range(nin)),
        states=2 if any(src == "s1" for src, _, _ in outs) else draw(st.integers(1, 2)),
        outs=outs,
        nested=draw(st.booleans()), opset=opset)


# ----------------------------------------------------------------------------- three forms

UNARY = ("Tanh", "Neg")
BINARY = ("Add", "Sub", "Mul", "Max", "Min")


@dataclass(frozen=True)
class StepSpec:
    """A recurrence over the rows of X (shape ``(length, *elem)``), forwards or in `reverse`:
    ``s_t, y_t = step(s_{t-1}, x_t)``, returning the last state and the stacked y_t.

    `program` is the step: each ``(op, a, b)`` appends ``op(values[a], values[b])`` to
    ``values = [s, x, 0.5, ...]`` (`a` never names the constant, so every value has the
    state's shape); the new state is the last value, y is ``values[y_from]``.
    """

    length: int
    elem: tuple
    reverse: bool
    program: tuple[tuple[str, int, int], ...]
    y_from: int


def _step_nodes(spec: StepSpec, s: str, x: str, tag: str) -> tuple[list, str, str]:
    """The step's nodes reading `s` and `x`, value names suffixed by `tag`: (nodes, s', y)."""
    values = [s, x, "half"]
    nodes = []
    for k, (op, a, b) in enumerate(spec.program):
        out = f"v{k}{tag}"
        ins = [values[a]] if op in UNARY else [values[a], values[b]]
        nodes.append(h.make_node(op, ins, [out]))
        values.append(out)
    return nodes, values[-1], values[spec.y_from]


def build_step(spec: StepSpec, form: str):
    """The recurrence as a ``"scan"``, a ``"loop"`` or ``"unrolled"`` (no loop node)."""
    elem = list(spec.elem)
    inputs = [vi("s0", F, elem), vi("X", F, [spec.length, *elem])]
    outputs = [vi("s", F, elem), vi("Y", F, [spec.length, *elem])]
    inits = [const("half", 0.5, np.float32)]
    if form == "scan":
        nodes, s_out, y = _step_nodes(spec, "s_in", "x_t", "")
        b = body(nodes + [h.make_node("Identity", [s_out], ["s_out"]),
                          h.make_node("Identity", [y], ["y"])],
                 [vi("s_in", F, elem), vi("x_t", F, elem)],
                 [vi("s_out", F, elem), vi("y", F, elem)])
        return model([h.make_node("Scan", ["s0", "X"], ["s", "Y"], body=b, num_scan_inputs=1,
                                  scan_input_directions=[int(spec.reverse)])],
                     inputs, outputs, inits)
    if form == "loop":
        nodes, s_out, y = _step_nodes(spec, "s_in", "x_t", "")
        index = ([h.make_node("Sub", ["last", "i"], ["t"])] if spec.reverse
                 else [h.make_node("Identity", ["i"], ["t"])])
        b = body(index + [h.make_node("Gather", ["X", "t"], ["x_t"], axis=0), *nodes,
                          h.make_node("Identity", [s_out], ["s_out"]),
                          h.make_node("Identity", [y], ["y"]),
                          h.make_node("Identity", ["c_in"], ["c_out"])],
                 [vi("i", I64, []), vi("c_in", B, []), vi("s_in", F, elem)],
                 [vi("c_out", B, []), vi("s_out", F, elem), vi("y", F, elem)])
        count = [h.make_node("Shape", ["X"], ["shape"]),
                 h.make_node("Gather", ["shape", "zero"], ["L"], axis=0),
                 h.make_node("Sub", ["L", "one"], ["last"])]
        return model([*count, h.make_node("Loop", ["L", "", "s0"], ["s", "Y"], body=b)],
                     inputs, outputs, [*inits, const("zero", 0), const("one", 1)])
    nodes, s, ys = [], "s0", []
    for t in range(spec.length):
        row = spec.length - 1 - t if spec.reverse else t
        inits.append(const(f"row{t}", row))
        nodes.append(h.make_node("Gather", ["X", f"row{t}"], [f"x{t}"], axis=0))
        step, s, y = _step_nodes(spec, s, f"x{t}", f"_{t}")
        nodes += [*step, h.make_node("Unsqueeze", [y, "axis0"], [f"y{t}"])]
        ys.append(f"y{t}")
    inits.append(const("axis0", [0]))
    nodes.append(h.make_node("Identity", [s], ["s"]))
    if ys:
        nodes.append(h.make_node("Concat", ys, ["Y"], axis=0))
    else:
        inits.append(const("empty", np.zeros((0, *elem), np.float32)))
        nodes.append(h.make_node("Identity", ["empty"], ["Y"]))
    return model(nodes, inputs, outputs, inits)


def step_feeds(spec: StepSpec, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"s0": rng.uniform(-1, 1, spec.elem).astype(np.float32),
            "X": rng.uniform(-1, 1, (spec.length, *spec.elem)).astype(np.float32)}


@st.composite
def step_specs(draw) -> StepSpec:
    program = []
    for k in range(draw(st.integers(1, 3))):
        n = 3 + k
        op = draw(st.sampled_from(UNARY + BINARY))
        a = draw(st.sampled_from([i for i in range(n) if i != 2]))
        program.append((op, a, draw(st.integers(0, n - 1))))
    return StepSpec(length=draw(st.integers(0, 4)), elem=draw(st.sampled_from([(3,), (2, 2)])),
                    reverse=draw(st.booleans()), program=tuple(program),
                    y_from=draw(st.sampled_from([i for i in range(3 + len(program)) if i != 2])))


# ----------------------------------------------------------------------------- growing cache


@dataclass(frozen=True)
class GrowSpec:
    """``for i in range(trip): cache = concat(cache, x * (i + 1), axis); acc += read(cache)``,
    a decoder's K/V cache in miniature: `cache` (shape ``(2, length0, 3)`` at the start) grows
    by `piece` along `axis` every iteration; `read` is how the body reads it (``"sum"`` over
    the grown axis, ``"softmax"`` along it then summed, ``"length"``: its length from
    ``Shape``, ``"matmul"``: contracted with a ones vector along it). `outputs` names the
    loop outputs the graph returns (``"acc"``, ``"cache"``, ``"accs"``: acc per step)."""

    trip: int
    length0: int
    axis: int  # 1 (the sequence axis) or -1
    piece: int
    read: str
    outputs: tuple[str, ...]


def _grow_read(spec: GrowSpec) -> list:
    """Nodes computing `r` (shape (2,)) from `cache_out`."""
    ax = spec.axis
    if spec.read == "length":
        return [h.make_node("Shape", ["cache_out"], ["shp"]),
                h.make_node("Gather", ["shp", "grown_ax"], ["len"], axis=0),
                h.make_node("Cast", ["len"], ["lenf"], to=F),
                h.make_node("Expand", ["lenf", "two"], ["r"])]
    if spec.read == "matmul":  # (2, L, 3) contracted over L: transpose to (2, 3, L) @ ones
        src = "cache_out"
        nodes = []
        if ax == 1:
            nodes.append(h.make_node("Transpose", [src], ["ct"], perm=[0, 2, 1]))
            src = "ct"
        nodes += [h.make_node("Shape", [src], ["shp"]),
                  h.make_node("Slice", ["shp", "m1", "big"], ["lastd"]),
                  h.make_node("ConstantOfShape", ["lastd"], ["ones"],
                              value=h.make_tensor("v", F, [1], [1.0])),
                  h.make_node("MatMul", [src, "ones"], ["mm"]),
                  h.make_node("ReduceSum", ["mm", "ax1"], ["r"], keepdims=0)]
        return nodes
    nodes = []
    src = "cache_out"
    if spec.read == "softmax":
        nodes.append(h.make_node("Softmax", ["cache_out"], ["sm"], axis=ax))
        src = "sm"
    return nodes + [h.make_node("ReduceSum", [src, "ax12"], ["r"], keepdims=0)]


def build_growing(spec: GrowSpec):
    ax = spec.axis
    nodes = [h.make_node("Add", ["i", "one_i"], ["i1"]),
             h.make_node("Cast", ["i1"], ["fi"], to=F),
             h.make_node("Mul", ["x", "fi"], ["piece"]),
             h.make_node("Concat", ["cache_in", "piece"], ["cache_out"], axis=ax),
             *_grow_read(spec),
             h.make_node("Add", ["acc_in", "r"], ["acc_out"]),
             h.make_node("Identity", ["acc_out"], ["acc_t"]),
             h.make_node("Identity", ["c_in"], ["c_out"])]
    grown = [2, None, 3] if ax == 1 else [2, 3, None]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("cache_in", F, grown),
                     vi("acc_in", F, [2])],
             [vi("c_out", B, []), vi("cache_out", F, grown), vi("acc_out", F, [2]),
              vi("acc_t", F, [2])],
             [const("one_i", 1), const("ax1", [1]), const("ax12", [1, 2]),
              const("grown_ax", ax % 3), const("two", [2]), const("m1", [-1]),
              const("big", [2**31])])
    piece = (2, spec.piece, 3) if ax == 1 else (2, 3, spec.piece)
    start = (2, spec.length0, 3) if ax == 1 else (2, 3, spec.length0)
    loop = h.make_node("Loop", ["M", "", "cache0", "acc0"], ["cache", "acc", "accs"], body=b,
                       name="decode")
    out_vi = {"acc": vi("acc", F, [2]), "cache": vi("cache", F, [2, None, None]),
              "accs": vi("accs", F, [None, 2])}
    return model([loop], [vi("M", I64, []), vi("cache0", F, list(start)),
                          vi("x", F, list(piece)), vi("acc0", F, [2])],
                 [out_vi[o] for o in spec.outputs], opset=17)


def growing_feeds(spec: GrowSpec, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    ax = spec.axis
    piece = (2, spec.piece, 3) if ax == 1 else (2, 3, spec.piece)
    start = (2, spec.length0, 3) if ax == 1 else (2, 3, spec.length0)
    return {"M": np.array(spec.trip, np.int64), "cache0": rng.random(start, np.float32),
            "x": rng.random(piece, np.float32), "acc0": np.zeros(2, np.float32)}


@st.composite
def growing_specs(draw) -> GrowSpec:
    outputs = draw(st.lists(st.sampled_from(["acc", "cache", "accs"]), min_size=1, max_size=3,
                            unique=True))
    return GrowSpec(trip=draw(st.integers(0, 5)), length0=draw(st.integers(1, 4)),
                    axis=draw(st.sampled_from([1, -1])), piece=draw(st.integers(1, 2)),
                    read=draw(st.sampled_from(["sum", "softmax", "length", "matmul"])),
                    outputs=tuple(outputs))
