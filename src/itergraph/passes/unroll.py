"""Loop unrolling: a loop becomes copies of its body, fully or K at a time.

Full unrolling replaces a loop whose number of iterations is known before it runs by that
many copies of its body, wired in sequence: compilers and runtimes without control flow
can then run the model, and small loops lose their per-iteration overhead. Partial
unrolling (factor K) keeps a loop but runs K copies of the body per iteration, followed by
the iterations left over (copied when their number is static, else the original loop).
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.clone import clone_value
from ..ir.graph import Graph, Node, Value
from ..ir.loop import Carried, Concat, Invariant, Last, Loop, Sliced
from ..ir.static_values import static_int
from ..ir.types import DataType, OptionalType, SequenceType, TensorType
from .base import LoopPass
from .loop_build import copy_iterations, drop_unread_initializers
from .loop_facts import condition_never_stops, int_const, static_count
from .loop_motion import static_shape
from .skip_report import SkipReport

#: Full unrolling's default limit on the number of iterations of one loop; the copied
#: nodes are limited to `NODES_PER_STEP` times that many.
DEFAULT_LIMIT = 256
NODES_PER_STEP = 32


def body_size(g: Graph) -> int:
    """Nodes of `g`, those of its subgraphs at any depth included."""
    return sum(1 for _ in g.walk())


class Unroll(SkipReport, LoopPass):
    """Loop unrolling, full (``factor=None``) or by a factor K.

    Applies to: every canonical `Loop` at any depth, innermost first, whose condition never
    stops it (`loop_facts.condition_never_stops`: no condition result, the condition input
    passed through, or a constant true; no precondition) and whose concatenated outputs have
    no padding ``length``.

    Full: a loop whose number of iterations N is known before it runs
    (`loop_facts.static_count`: a constant trip count, possibly from shape arithmetic on
    static shapes, and sliced inputs of static length), 1 <= N <= `limit`, and N times its
    body's node count <= ``32 * limit``, is replaced by N copies of its body wired in
    sequence: iteration k's copy reads the constant k as the iteration number, the k-th
    piece of each sliced input (``Gather`` or ``Slice``), the carried values of copy k-1;
    ``Last`` outputs are the last copy's values; ``Concat`` outputs are ``Concat`` of the
    copies' values (``Unsqueeze``d when stacked on a new axis), in reverse order when
    reversed.

    Factor K >= 2: a loop whose carried values are tensors and whose sliced inputs each span
    their whole axis in pieces of ``part_size == |stride|``, with static N: N <= K is fully
    unrolled (as above); otherwise it becomes a loop of N // K iterations whose body holds K
    copies (sliced inputs taken K pieces at a time, the iteration number ``i*K + j``, outputs
    concatenated K at a time), followed by copies for the N mod K iterations left. A loop with a
    trip count unknown before it runs, no sliced input and only ``Last`` outputs of carried
    values (and ``Concat`` outputs of static shape) becomes the K-copy loop over ``max(M, 0) //
    K`` iterations followed by the original loop for the rest, its iteration number offset.

    Returns: the number of loops rewritten. Loops left alone and why are in `skipped`
    (``"Loop node 'name': reason"``) after each call.

    Guarantees: every output keeps its value for every input; only node and value names
    inside the loop change. A loop whose condition may stop it early is never unrolled
    (no copy could know whether to run), nor one that would fail at run time.
    """

    name = "unroll"
    in_place = True

    def __init__(self, factor: int | None = None, limit: int = DEFAULT_LIMIT):
        if factor is not None and factor < 1:
            raise ValueError("the unroll factor must be at least 1")
        self.factor = factor
        self.limit = limit
        super().__init__()

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        why = self._rewrite(graph, loop)
        if why:
            return self.skip(loop, why)
        return 1

    def _rewrite(self, graph: Graph, loop: Loop) -> str:
        """Rewrite `loop` and return "" or leave it and say why."""
        if self.factor == 1:
            return "unroll factor 1 leaves loops as they are"
        if not condition_never_stops(loop):
            return "its condition may stop it early (each copy would need to test it)"
        if loop.precondition is not None:
            return "it has a precondition (a while loop)"
        if any(isinstance(o, Concat) and o.length is not None for o in loop.output_ports):
            return "a concatenated output has a padding length"
        n, why = static_count(loop)
        size = max(body_size(loop.body), 1)
        if self.factor is None or (n is not None and n <= self.factor):
            if n is None:
                return why
            if n == 0:
                return "it runs no iteration"
            limit = self.limit if self.factor is None else max(self.limit, self.factor)
            if n > limit or n * size > NODES_PER_STEP * limit:
                return (f"{n} iterations of {size} nodes are over the limit ({limit} "
                        f"iterations, {NODES_PER_STEP * limit} nodes)")
            _full(graph, loop, n)
            return ""
        k = self.factor
        if any(isinstance(p.param.type, SequenceType | OptionalType) for p in loop.carried):
            return ("it carries a sequence or optional (list-append loops are rewritten for "
                    "OpenVINO whole, not K steps at a time)")
        if k * size > NODES_PER_STEP * max(self.limit, k):
            return f"{k} copies of {size} nodes are over the node limit"
        for s in loop.sliced:
            if s.part_size != abs(s.stride) or (s.start, s.end) not in ((0, -1), (-1, 0)):
                return "a sliced input is not taken whole, one piece after the other"
        if n is not None:
            _partial_static(graph, loop, k, n)
            return ""
        return _partial_dynamic(graph, loop, k) or ""


def _static_piece(b: Builder, dims: dict[int, int]):
    def piece(p: Sliced, k: int) -> Value:
        dim = dims[id(p)]
        return b.piece(p.value, p.axis, p.piece_start(k, dim), p.part_size, p.keep_axis,
                       type=p.param.type)
    return piece


def _dims(loop: Loop) -> dict[int, int]:
    return {id(p): static_shape(p.value)[p.axis] for p in loop.sliced}


def _place(graph: Graph, loop: Loop, nodes: list[Node]) -> None:
    """Put `nodes` where `loop` is (they may include it)."""
    at = graph.nodes.index(loop)
    graph.nodes[at:at + 1] = nodes
    if not any(n is loop for n in nodes):
        drop_unread_initializers(graph, loop.inputs)


def _full(graph: Graph, loop: Loop, n: int) -> None:
    """Replace `loop` (n >= 1 iterations) by n copies of its body."""
    b = Builder(graph, loop.name or "unrolled")
    _, maps = copy_iterations(b, loop, range(n), [p.value for p in loop.carried],
                              _static_piece(b, _dims(loop)))
    for o in loop.output_ports:
        vals = [m.get(o.result.uid, o.result) for m in maps]
        if isinstance(o, Last):
            b.node("Identity", [vals[-1]], out=o.output, version=16)
            continue
        _join(b, o, vals, o.output)
    _place(graph, loop, b.nodes)


def _join(b: Builder, o: Concat, vals: list[Value], out: Value | None,
          head: list[Value] = (), tail: list[Value] = ()) -> Value:
    """The per-iteration values `vals` joined as `o` joins them (into `out`), with already
    joined blocks `head` and `tail` around them (in output order)."""
    if o.reverse:
        vals = vals[::-1]
    if o.new_axis:
        vals = [b.unsqueeze(v, o.axis) for v in vals]
    return b.concat([*head, *vals, *tail], o.axis, out=out)


def _chunked(loop: Loop, k: int, trips: int | None = None) -> tuple[Graph, Loop, dict]:
    """A loop whose body runs `k` copies of `loop`'s body: the ports, the body and, per output
    port of `loop`, the main loop's output value. The caller sets its trip count, `trips`
    when static (its sliced inputs then cover exactly ``trips * k`` pieces: OpenVINO's
    kept-axis slicing refuses an axis its part size does not divide)."""
    body = loop.body
    nb = Graph(f"{body.name}_x{k}", opset_imports=body.opset_imports)
    b = Builder(nb, f"{loop.name or 'loop'}_x{k}")
    ports: list = []
    state: list[Value] = []
    chunk_of: dict[int, Value] = {}
    inv: dict[int, Value] = {}
    for p in loop.input_ports:
        if isinstance(p, Sliced):
            q = Value(f"{p.param.name or 'piece'}_x{k}")
            nb.inputs.append(q)
            start, end = p.start, p.end
            if trips is not None:
                dim = static_shape(p.value)[p.axis]
                span = trips * k * p.part_size
                start, end = (0, span) if p.stride > 0 else (dim, dim - span)
            ports.append(Sliced(p.value, q, p.axis, start, end, p.stride * k,
                                p.part_size * k, keep_axis=True))
            chunk_of[id(p)] = q
            continue
        q = clone_value(p.param)
        nb.inputs.append(q)
        if isinstance(p, Invariant):
            ports.append(Invariant(p.value, q))
            inv[p.param.uid] = q
        else:
            ports.append(Carried(p.value, q, q))
            state.append(q)
    it = None
    if loop.iteration_param is not None:
        it = clone_value(loop.iteration_param)
        nb.inputs.insert(0, it)

    def piece(p: Sliced, j: int) -> Value:
        at = (j % k if p.stride > 0 else k - 1 - j % k) * p.part_size
        return b.piece(chunk_of[id(p)], p.axis, at, p.part_size, p.keep_axis,
                       type=p.param.type)

    def iteration(j: int) -> Value:
        t = it.type
        scaled = b.node("Mul", [it, b.const(int_const(t, k), "k")], type=t)
        return b.node("Add", [scaled, b.const(int_const(t, j), "j")], type=t)

    shared = {}
    for init in body.initializers:
        c = clone_value(init)
        nb.initializers.append(c)
        shared[init.uid] = c
    shared.update(inv)  # the copies read the new loop's invariant parameters
    final, maps = copy_iterations(b, loop, range(k), state, piece,
                                  iteration if it is not None else None, shared)
    nb.nodes = b.nodes
    for port, res in zip([p for p in ports if isinstance(p, Carried)], final, strict=True):
        port.result = res
    outs: list = []
    main_out: dict[int, Value] = {}
    for o in loop.output_ports:
        vals = [m.get(o.result.uid, o.result) for m in maps]
        v = Value(f"{o.output.name or 'out'}_main")
        if isinstance(o, Last):
            outs.append(Last(vals[-1], v))
        else:
            chunk = _join(b, o, vals, None)
            chunk.type = _chunk_type(o, k)
            nb.nodes = b.nodes
            outs.append(Concat(chunk, v, o.axis, o.reverse, new_axis=False))
            v.type = o.output.type
        main_out[id(o)] = v
    for port in [p for p in ports if isinstance(p, Carried)]:
        last = Value(f"{port.param.name or 'state'}_main", port.param.type)
        outs.append(Last(port.result, last))
    main = Loop(nb, ports, outs, iteration_param=it, name=f"{loop.name or 'loop'}_x{k}",
                origin=loop.origin, negative_trip_count="zero")
    return nb, main, main_out


def _chunk_type(o: Concat, k: int):
    t = o.result.type
    if not isinstance(t, TensorType) or t.shape is None:
        return None
    shape = list(t.shape)
    if o.new_axis:
        axis = o.axis if o.axis >= 0 else o.axis + len(shape) + 1
        shape.insert(axis, k)
    else:
        axis = o.axis if o.axis >= 0 else o.axis + len(shape)
        d = shape[axis]
        shape[axis] = d * k if isinstance(d, int) else None
    return TensorType(t.dtype, tuple(shape))


def _carried_finals(main: Loop) -> list[Value]:
    """The main loop's final carried values (the `Last` ports `_chunked` adds at the end)."""
    n = len(main.carried)
    return [p.output for p in main.output_ports[len(main.output_ports) - n:]]


def _partial_static(graph: Graph, loop: Loop, k: int, n: int) -> None:
    """`loop` (n > k iterations) as an n // k-iteration loop of k copies, then the rest
    copied."""
    m_iters = n // k
    _, main, main_out = _chunked(loop, k, m_iters)
    b = Builder(graph, f"{loop.name or 'loop'}_rest")
    main.trip_count = b.i64(m_iters, "trips")
    b.nodes.append(main)
    done = m_iters * k
    _, maps = copy_iterations(b, loop, range(done, n), _carried_finals(main),
                              _static_piece(b, _dims(loop)))
    for o in loop.output_ports:
        head = main_out[id(o)]
        if isinstance(o, Last):
            v = maps[-1].get(o.result.uid, o.result) if maps else head
            b.node("Identity", [v], out=o.output, version=16)
            continue
        vals = [m.get(o.result.uid, o.result) for m in maps]
        if o.reverse:
            _join(b, o, vals, o.output, tail=[head])
        else:
            _join(b, o, vals, o.output, head=[head])
    _place(graph, loop, b.nodes)


def _partial_dynamic(graph: Graph, loop: Loop, k: int) -> str:
    """`loop`, with a trip count known only at run time and no sliced input, as a loop of
    k copies for max(M, 0) // k iterations followed by `loop` itself for the rest; "" or why
    not."""
    if loop.sliced:
        return "its sliced inputs have no static length"
    if loop.trip_count is None:
        return "it has no trip count"
    if loop.negative_trip_count != "zero" and static_int(loop.trip_count) is None:
        return "a negative trip count would make it unbounded (OpenVINO)"
    for o in loop.output_ports:
        if isinstance(o, Last) and loop.carried_for_result(o.result) is None:
            return "a Last output is not a carried value (the first part may run zero times)"
        if isinstance(o, Concat) and static_shape(o.result) is None:
            return "a concatenated output has no static shape (the first part may be empty)"
    it = loop.iteration_param
    if it is not None and not (isinstance(it.type, TensorType) and it.type.rank == 0):
        return "its iteration number is not a scalar"
    _, main, main_out = _chunked(loop, k)
    b = Builder(graph, f"{loop.name or 'loop'}_rest")
    i64 = TensorType(DataType.INT64, ())
    t = b.node("Cast", [loop.trip_count], {"to": DataType.INT64.onnx}, type=i64)
    t = b.node("Max", [t, b.i64(0, "zero")], type=i64)
    trips = b.node("Div", [t, b.i64(k, "k")], type=i64, version=14)
    main.trip_count = trips
    b.nodes.append(main)
    done = b.node("Mul", [trips, b.i64(k, "k")], type=i64, version=14)
    loop.trip_count = b.node("Sub", [t, done], type=i64, version=14)
    for p, final in zip(loop.carried, _carried_finals(main), strict=True):
        p.value = final
    if it is not None:
        offset = done
        if it.type.dtype not in (None, DataType.INT64):
            offset = b.node("Cast", [done], {"to": it.type.dtype.onnx},
                            type=TensorType(it.type.dtype, ()))
        new_it = clone_value(it)
        body = loop.body
        body.inputs = [new_it if v is it else v for v in body.inputs]
        body.nodes.insert(0, Node("Add", [new_it, offset], [it], version=14,
                                  name=f"{loop.name or 'loop'}_iteration"))
        loop.iteration_param = new_it
    after = []
    for o in loop.output_ports:
        if isinstance(o, Concat):
            whole = o.output
            rest = Value(f"{whole.name or 'out'}_rest", whole.type)
            rest.producer, rest.index = loop, whole.index
            loop.outputs[whole.index] = rest
            o.output = rest
            blocks = [rest, main_out[id(o)]] if o.reverse else [main_out[id(o)], rest]
            after.append(Node("Concat", blocks, [whole], {"axis": o.axis}, version=13,
                              name=f"{loop.name or 'loop'}_join"))
    b.nodes.append(loop)
    b.nodes.extend(after)
    _place(graph, loop, b.nodes)
    return ""


def unroll(factor: int | None = None, limit: int = DEFAULT_LIMIT) -> Unroll:
    """An `Unroll` pass (full when `factor` is None)."""
    return Unroll(factor, limit)

