"""ONNX Loop, Scan and If into network loops and conditionals, as onnx-tensorrt maps them.

Loop: ``M`` -> a COUNT trip limit (INT32, as the parser casts it; absent, or a constant >=
INT32_MAX, means none), the iteration number -> a counting recurrence; ``cond`` -> a
recurrence (initial ``cond``, next the body's condition output) that is the WHILE trip limit;
carried values -> recurrences and LAST_VALUE outputs; scan outputs -> CONCATENATE outputs whose
length is the trip count. Refused as TensorRT refuses them: a scan output of a loop without a
trip count (its length is not static), a carried value whose shape changes from one trip to
the next, carried values that are not tensors.

Scan: the trip count is the length of the last scan input along its axis; states ->
recurrences, scan inputs -> iterators (axis, reverse), scan outputs -> CONCATENATE / REVERSE
outputs on their axis. Refused: Scan-8's ``sequence_lens``, and types other than FLOAT, HALF
and BF16 (the types TensorRT's parser lists for Scan).

If: a condition known at build time imports only the chosen branch; otherwise an
IIfConditional whose branches' layers read outside values through conditional inputs.
"""

from __future__ import annotations

import numpy as np

from ..core import Tensor
from ..enums import DataType, ElementWiseOperation, LoopOutput, TripLimit
from ..shapes import same_dims
from .errors import ErrorCode, fail, node_name
from .helpers import (
    cast,
    dtype_of,
    ew,
    ints,
    norm_axis,
    scalar,
)
from .registry import import_graph, importer

INT32_MAX = 2**31 - 1


def _body_io(graph):
    return [i.name for i in graph.input], [o.name for o in graph.output]


def _set_next(ctx, rec, nxt: Tensor, what: str) -> None:
    init = rec.get_input(0)
    if (not same_dims(tuple(nxt.shape), tuple(init.shape))
            or nxt.compute_dtype != init.compute_dtype):
        fail(ErrorCode.INVALID_NODE,
             f"{what}: the shape of a carried value must stay the same across iterations: its "
             f"initial value has type {init.compute_dtype.name} and shape "
             f"{tuple(init.shape)}, its "
             f"next value {nxt.compute_dtype.name} and {tuple(nxt.shape)} "
             "(inputs to IRecurrenceLayer "
             "have different dimensions)")
    rec.set_input(1, nxt)


def _uses(graph, name: str) -> bool:
    """Does a node of `graph` (or of its subgraphs) read `name`?"""
    for n in graph.node:
        if name in n.input:
            return True
        for a in n.attribute:
            if a.type == a.GRAPH and _uses(a.g, name):
                return True
            if a.type == a.GRAPHS and any(_uses(g, name) for g in a.graphs):
                return True
    return name in [o.name for o in graph.output]


@importer("Loop")
def _loop(ctx, node, ins, attrs):
    net = ctx.network
    body = attrs["body"]
    names_in, names_out = _body_io(body)
    n_state = len(ins) - 2
    if len(names_in) != n_state + 2 or len(names_out) < n_state + 1:
        fail(ErrorCode.INVALID_NODE, "the body's inputs and outputs do not match the Loop's "
             f"{n_state} carried values")
    loop = net.add_loop()
    loop.name = node_name(node)
    m, cond = ins[0], ins[1] if len(ins) > 1 else None
    trip = None
    mc = ctx.const(m)
    if m is not None and not (mc is not None and np.asarray(mc).size == 1 and
                              int(np.asarray(mc).reshape(-1)[0]) >= INT32_MAX):
        trip = cast(ctx, scalar(ctx, m), DataType.INT32)
        loop.add_trip_limit(trip, TripLimit.COUNT)
    ctx.push()
    try:
        if trip is not None or _uses(body, names_in[0]):
            counter = loop.add_recurrence(ctx.tensor(np.asarray(0, np.int64)))
            counter.set_input(1, ew(ctx, ElementWiseOperation.SUM, counter.get_output(0),
                                    ints(ctx, 1)))
            ctx.put(names_in[0], counter.get_output(0))
        cond_t = None
        if cond is not None:
            cond_t = scalar(ctx, cond)
            ctx.put(names_in[1], cond_t)
        elif _uses(body, names_in[1]):
            ctx.put(names_in[1], np.asarray(True))
        recs = []
        for i in range(n_state):
            v = ins[2 + i]
            if v is None:
                fail(ErrorCode.INVALID_NODE, f"carried value {i} has no initial value")
            rec = loop.add_recurrence(ctx.tensor(v))
            recs.append(rec)
            ctx.put(names_in[2 + i], rec.get_output(0))
        import_graph(ctx, body)
        if cond_t is not None:
            rc = loop.add_recurrence(cond_t)
            rc.set_input(1, scalar(ctx, cast(ctx, ctx.get(names_out[0]), DataType.BOOL)))
            loop.add_trip_limit(rc.get_output(0), TripLimit.WHILE)
        if trip is None and cond_t is None:
            fail(ErrorCode.UNSUPPORTED_NODE, "a Loop with neither a trip count nor a condition "
                 "never ends; TensorRT needs a trip limit")
        outs = []
        for i, rec in enumerate(recs):
            nxt = ctx.tensor(ctx.get(names_out[1 + i]))
            _set_next(ctx, rec, nxt, f"carried value {i} ('{names_in[2 + i]}')")
            outs.append(loop.add_loop_output(rec.get_output(0), LoopOutput.LAST_VALUE)
                        .get_output(0))
        for name in names_out[1 + n_state:]:
            if trip is None:
                fail(ErrorCode.UNSUPPORTED_NODE,
                     f"scan output '{name}' of a loop without a trip count: the scan output "
                     "length cannot be dynamic (TensorRT needs a static length)")
            lo = loop.add_loop_output(ctx.tensor(ctx.get(name)), LoopOutput.CONCATENATE, 0)
            lo.set_input(1, trip)
            outs.append(lo.get_output(0))
    finally:
        ctx.pop()
    for layer in [*loop.boundary_layers()]:
        if layer.name.startswith("(Unnamed"):
            ctx.name(layer)
    return outs


_SCAN_TYPES = (DataType.FLOAT, DataType.HALF, DataType.BF16)


@importer("Scan")
def _scan(ctx, node, ins, attrs):
    net = ctx.network
    body = attrs["body"]
    off = 1 if ctx.opset < 9 else 0
    if off and ins and ins[0] is not None:
        fail(ErrorCode.UNSUPPORTED_NODE, "TensorRT doesn't support sequence_lens input for this "
             "node!")
    values = ins[off:]
    n_scan = attrs["num_scan_inputs"]
    n_state = len(values) - n_scan
    names_in, names_out = _body_io(body)
    n_scan_out = len(node.output) - n_state
    for i, v in enumerate(values):
        if dtype_of(v) not in _SCAN_TYPES:
            fail(ErrorCode.UNSUPPORTED_NODE_DATATYPE,
                 f"input {i + off} has type {dtype_of(v).name}; Scan supports FLOAT, HALF and "
                 "BF16")
    in_axes = list(attrs.get("scan_input_axes", [off] * n_scan))
    in_dirs = list(attrs.get("scan_input_directions", [0] * n_scan))
    out_axes = list(attrs.get("scan_output_axes", [off] * n_scan_out))
    out_dirs = list(attrs.get("scan_output_directions", [0] * n_scan_out))
    loop = net.add_loop()
    loop.name = node_name(node)
    last = ctx.tensor(values[-1])
    axis = norm_axis(ctx, in_axes[-1], len(last.shape))
    length = ctx.name(net.add_gather(ctx.name(net.add_shape(last)).get_output(0),
                                     ints(ctx, axis), 0)).get_output(0)
    trip = cast(ctx, length, DataType.INT32)
    loop.add_trip_limit(trip, TripLimit.COUNT)
    ctx.push()
    try:
        recs = []
        for i in range(n_state):
            rec = loop.add_recurrence(ctx.tensor(values[i]))
            recs.append(rec)
            ctx.put(names_in[i], rec.get_output(0))
        for j in range(n_scan):
            x = ctx.tensor(values[n_state + j])
            it = loop.add_iterator(x, norm_axis(ctx, in_axes[j], len(x.shape)), in_dirs[j] == 1)
            ctx.put(names_in[n_state + j], it.get_output(0))
        import_graph(ctx, body)
        outs = []
        for i, rec in enumerate(recs):
            _set_next(ctx, rec, ctx.tensor(ctx.get(names_out[i])),
                      f"state {i} ('{names_in[i]}')")
            outs.append(loop.add_loop_output(rec.get_output(0), LoopOutput.LAST_VALUE)
                        .get_output(0))
        for j in range(n_scan_out):
            t = ctx.tensor(ctx.get(names_out[n_state + j]))
            kind = LoopOutput.REVERSE if out_dirs[j] == 1 else LoopOutput.CONCATENATE
            lo = loop.add_loop_output(t, kind, norm_axis(ctx, out_axes[j], len(t.shape) + 1))
            lo.set_input(1, trip)
            outs.append(lo.get_output(0))
    finally:
        ctx.pop()
    return outs


@importer("If")
def _if(ctx, node, ins, attrs):
    then_g, else_g = attrs["then_branch"], attrs["else_branch"]
    if len(then_g.output) != len(else_g.output):
        fail(ErrorCode.INVALID_NODE, "then/else subgraphs should have the same number of outputs:"
             f" then outputs = {len(then_g.output)}, else outputs = {len(else_g.output)}.")
    c = ctx.const(ins[0])
    if c is not None and np.asarray(c).size == 1:
        g = then_g if bool(np.asarray(c).reshape(-1)[0]) else else_g
        ctx.push()
        try:
            import_graph(ctx, g)
            return [ctx.get(o.name) for o in g.output]
        finally:
            ctx.pop()
    net = ctx.network
    cond = net.add_if_conditional()
    cond.name = node_name(node)
    cond.set_condition(scalar(ctx, cast(ctx, ins[0], DataType.BOOL)))
    branch_outs = []
    inputs: dict[int, Tensor] = {}
    for g in (then_g, else_g):
        first = len(net.layers)
        ctx.push()
        try:
            import_graph(ctx, g)
            outs = [ctx.tensor(ctx.get(o.name)) for o in g.output]
        finally:
            ctx.pop()
        made = net.layers[first:]
        _route_inputs(cond, made, inputs)
        branch_outs.append(outs)
    results = []
    for t, f in zip(*branch_outs):
        if len(t.shape) != len(f.shape):
            fail(ErrorCode.INVALID_NODE, "Output tensors of the two conditional branches must "
                 f"have the same rank ({tuple(t.shape)} vs {tuple(f.shape)})")
        results.append(cond.add_output(t, f).get_output(0))
    return results


def _route_inputs(cond, layers, inputs: dict[int, Tensor]) -> None:
    """Let the branch `layers` read the values they take from outside the branch through the
    conditional's input layers (one per outside tensor, shared by both branches)."""
    own = {id(t) for layer in layers for t in layer.outputs}
    for layer in layers:
        if not layer.inputs or getattr(layer, "_conditional", None) is cond:
            continue
        for i, t in enumerate(layer.inputs):
            if t is None or id(t) in own or (t.producer is None and not t.is_network_input):
                continue
            if t.const_value() is not None and t.producer is not None and \
                    not t.producer.inputs:
                continue  # constants need no input layer
            if id(t) not in inputs:
                inputs[id(t)] = cond.add_input(t).get_output(0)
            layer.inputs[i] = inputs[id(t)]
            layer.network.touch()


__all__: list[str] = []
