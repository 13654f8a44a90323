"""Recurrent-cell loops as the standard ``LSTM``/``GRU``/``RNN`` operators (``fuse-cells``).

`fuse_cells` recognises a loop whose body is a cell and replaces it by one
``itergraph.RecurrentSequence`` node; this pass does the same and then spells that node with
the ONNX operator of its kind, so that a written file holds an op every runtime knows (the
ONNX writer writes it as is, the OpenVINO writer as ``LSTMSequence``/``GRUSequence``/
``RNNSequence``) and the backends run it on their fused path.

The spelling of one ``RecurrentSequence`` (inputs ``X, W, R, B, RB, h0, c0, P, steps``):

- ``X`` is sliced to its first ``steps`` entries (reverse: its last) when the loop had a trip
  count not shown to be X's length (`dims`; a count of -1 meaning "unbounded" keeps
  them all); X that is a time-reversed input is replaced by the input, the direction
  flipped;
- ``W``/``R`` gain the leading direction axis, ``B`` and ``RB`` become the one ``B [1, 2GH]``
  (a missing half is zeros), the initial states gain the direction axis after being expanded
  to X's batch (the loop broadcast them in its first step);
- direction ``forward`` or ``reverse`` as the node's ``reverse``; ``hidden_size``,
  ``activations``, ``activation_alpha``/``beta``, ``clip``, ``linear_before_reset`` as
  matched;
- ``Y [T, 1, B, H]`` loses its direction axis and, reverse, is flipped into step order (the
  operator writes step k's state at position ``T-1-k``); ``Y_h``/``Y_c`` lose the direction
  axis.

Then a forward and a reverse operator of one kind over the same input, with the same
attributes, are merged into one ``bidirectional`` operator whose direction slices feed what
the two fed (`merge_directions`).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...ir.graph import Graph, Node, Value
from ...ir.loop import Loop
from ...ir.static_values import partial_shape
from ...ir.traversal import toposort
from ...ir.types import DataType, TensorType
from ..base import Pass
from ..loop_motion import const_value, is_pure
from .dims import axis_ref, dim_ref, equivalent, inner_axis, uniform_ref
from .emit import Emitter
from .fuse_cells import DOMAIN, OP, place_fusable, place_stacked, replace_loop
from .match import GATES, CellMatch, strip

#: The activations both ONNX Runtime's and OpenVINO's sequence operators implement.
PORTABLE_ACTIVATIONS = ("Sigmoid", "Tanh", "Relu")
#: The version of the operators written (all their attributes exist since 7; no ``layout``).
VERSION = 7
_I64_MAX = np.iinfo(np.int64).max


class FuseCellOps(Pass):
    """Loops whose body is a recurrent cell become the ONNX ``LSTM``/``GRU``/``RNN`` operator.

    Applies to: every loop `fuse_cells` fuses (Loop, Scan, TensorIterator at any depth; its
    contract lists the step-input, carried-value and output forms), and every while loop
    that is one once its time counter is read as a trip count (`counter`: TensorFlow's
    ``t + 1 < L`` loops as tf2onnx and OpenVINO write them, counters and unread outputs
    dropped), when the matched cell is one both the ONNX operator and OpenVINO's
    ``LSTMSequence``/``GRUSequence``/``RNNSequence`` express exactly: activations among
    Sigmoid, Tanh and Relu (ONNX's Softsign, HardSigmoid, Elu... have no OpenVINO
    counterpart), no peepholes (OpenVINO's sequence ops have none) and no coupled
    input-forget gate (likewise), in float32 (ONNX Runtime's kernels refuse double). Such
    loops stay loops, as do bodies that are not one cell (Keras masking, which selects the
    state per batch row; gates cut by ``SplitToSequence`` with sizes computed in the body).
    Cells stacked in one loop (`fission`) become one operator each when every one of
    them can. A ``clip`` is kept. A loop over a
    time-reversed input (``ReverseSequence`` over the whole length, seen through shape ops)
    becomes an operator of the other direction over the input itself. Then a forward and a
    reverse operator of one kind, with the same attributes and weight shapes, over the same
    input (one value, or one value through shape ops that place its axes alike), neither
    reading the other's results, become one ``bidirectional`` operator.

    With ``fuse-cells=KINDS`` (``lstm+gru``) only cells of those kinds are fused (ONNX
    Runtime's ``RNN`` kernel is slower than the loop from batch 4 on; see
    ``bench/transforms_cells.py``).

    Returns: the number of loops replaced plus the number of direction pairs merged.

    Guarantees: outputs equal the loop's up to floating-point rounding (see `fuse_cells`)
    for every input on which the loop runs at least one iteration without error, and the
    operators' inputs have the shapes the ONNX specification demands whenever the loop's
    initial states broadcast to the step input's batch. Where the loop would run zero
    iterations the operator's result is whatever the runtime makes of an empty sequence
    (the loop's own zero-iteration outputs depend on declared types the operator lacks).
    """

    name = "fuse_cell_ops"
    in_place = True

    def __init__(self, kinds: tuple[str, ...] = tuple(GATES)):
        self.kinds = kinds

    def __call__(self, graph: Graph, kept: tuple[Value, ...] = ()) -> int:
        """`kept`: values the node owning `graph` takes from it besides its outputs."""
        done = 0
        for node in list(graph.nodes):
            for g in node.subgraphs():
                done += self(g, tuple(node.body_results()))
            if isinstance(node, Loop):
                done += _fuse(graph, node, kept, self.kinds)
        if done:
            done += merge_directions(graph)
        return done


fuse_cell_ops = FuseCellOps()


def for_kinds(argument: str | None) -> FuseCellOps:
    """The pass for ``fuse-cells=KINDS``: cell kinds joined by ``+`` (``lstm+gru``), all
    when `argument` is None."""
    if argument is None:
        return fuse_cell_ops
    kinds = tuple(k.strip().upper() for k in argument.split("+") if k.strip())
    bad = [k for k in kinds if k not in GATES]
    if bad or not kinds:
        raise InputError(f"fuse-cells: unknown cell kind(s) {', '.join(bad) or '(none)'} in "
                         f"'{argument}'; kinds: lstm, gru, rnn joined by '+'")
    return FuseCellOps(kinds)


def portable(cell: CellMatch) -> bool:
    """Whether the ONNX operator and OpenVINO's sequence operator both express `cell`."""
    acts = cell.attrs.get("activations")
    return (not cell.peep and not cell.attrs.get("input_forget", 0)
            and (acts is None or all(a in PORTABLE_ACTIVATIONS for a in acts)))


def _float32(*values: Value) -> bool:
    """Whether the first of `values` with a known element type is float32 (ONNX Runtime's
    LSTM/GRU/RNN kernels refuse double: "LSTM operator does not support double yet")."""
    for v in values:
        t = v.type
        if isinstance(t, TensorType) and t.dtype is not None:
            return t.dtype == DataType.FLOAT32
    return True


def _fuse(graph: Graph, loop: Loop, kept: tuple[Value, ...], kinds: tuple[str, ...]) -> int:
    first = len(graph.initializers)
    found = place_fusable(graph, loop, kept)
    if found is not None:
        pieces, restore = [found[:2]], found[2]
    else:  # cells stacked in one loop: an operator each, or none
        found = place_stacked(graph, loop, kept)
        if found is None:
            return 0
        pieces, restore = found
    before = {id(n) for n in graph.nodes}
    if not all(plan is not None and plan.cell.kind in kinds
               and plan.mask is None  # no operator has a mask
               and portable(plan.cell) and _float32(plan.cell.h, plan.cell.x, plan.step.whole)
               for _, plan in pieces) or not replace_loop(graph, *pieces[0]):
        restore()
        return 0
    for piece, plan in pieces[1:]:
        replace_loop(graph, piece, plan)  # (should one fail, that piece stays a loop)
    fused = [n for n in graph.nodes if id(n) not in before and n.op_type == OP
             and n.domain == DOMAIN]
    for node in fused:
        _spell(graph, node)
    _drop_unread(graph, first, loop, kept)
    return 1


def _drop_unread(graph: Graph, first: int, loop: Loop, kept: tuple[Value, ...]) -> None:
    """Remove what nothing reads any more: the initializers from index `first` on (the
    fused node's weights, re-laid out for the operator), the loop's own weights, and pure
    nodes that only fed the loop (a ``SequenceEmpty`` starting the list it appended to)."""
    todo = [v.producer for v in loop.reads() if v.producer is not None]
    while True:
        read = ({v.uid for n in graph.nodes for v in n.reads()} | {v.uid for v in graph.outputs}
                | {v.uid for v in kept if v is not None})
        dead = list({id(n): n for n in todo if n in graph.nodes and is_pure(n)
                     and not any(v.uid in read for v in n.outputs)}.values())
        if not dead:
            break
        for n in dead:
            graph.nodes.remove(n)
            todo += [v.producer for v in n.reads() if v.producer is not None]
    fed = {v.uid for v in loop.reads()}
    graph.initializers[:] = [v for k, v in enumerate(graph.initializers)
                             if v.uid in read or (k < first and v.uid not in fed)]


def _spell(graph: Graph, node: Node) -> None:
    """Replace the ``RecurrentSequence`` `node` of `graph` by the operator and its glue."""
    X, W, R, B, RB, h0, c0, _P, steps = (list(node.inputs) + [None] * 9)[:9]
    a = node.attrs
    kind, H = a["cell"], int(a["hidden_size"])
    gh = len(GATES[kind]) * H
    reverse = bool(a.get("reverse", 0))
    em = Emitter(graph, None, node.name or "cell")
    plain = _unreversed(em, X)
    if plain is not None:  # forward over reversed X: backward over X, same outputs
        X, reverse = plain, not reverse
    x = _steps(em, X, steps, reverse, a.get("negative_steps") == "unbounded")
    w, r = (const_value(v) if const_value(v) is not None else v for v in (W, R))
    dtype = em.dtype(w)
    bias = None
    if B is not None or RB is not None:
        halves = [np.zeros(gh, dtype) if b is None else
                  (const_value(b) if const_value(b) is not None else b) for b in (B, RB)]
        bias = em.unsqueeze(em.concat(halves, 0), [0])
    batch = _batch(em, X, h0)
    states = [None if s is None else em.unsqueeze(_expand(em, s, batch, H), [0])
              for s in (h0, c0 if kind == "LSTM" else None)]
    attrs = {"hidden_size": H, "direction": "reverse" if reverse else "forward"}
    for k in ("activations", "activation_alpha", "activation_beta", "clip"):
        if a.get(k) is not None:
            attrs[k] = a[k]
    if kind == "GRU":
        attrs["linear_before_reset"] = int(a.get("linear_before_reset", 0))
    ins = [x, em.unsqueeze(w, [0]), em.unsqueeze(r, [0]), bias, None, states[0]]
    if kind == "LSTM":
        ins.append(states[1])
    n_out = 3 if kind == "LSTM" else 2
    op = em.node(kind, ins, attrs, outputs=n_out, version=VERSION, name=node.name)
    op.meta.update(node.meta)
    y = em.squeeze(op.outputs[0], [1])
    if reverse:
        y = em.reverse(y, 0)
    pairs = [(y, node.outputs[0])]
    pairs += [(em.squeeze(o, [0]), out) for o, out in zip(op.outputs[1:], node.outputs[1:])]
    em.bind(pairs)
    at = graph.nodes.index(node)
    graph.nodes[at:at + 1] = em.nodes


def _steps(em: Emitter, X: Value, steps: Value | None, reverse: bool, unbounded: bool):
    """X cut to the steps the loop runs (all of it when the count cannot be shorter)."""
    if steps is None:
        return X
    ref = dim_ref(steps)
    if ref is not None and ref == axis_ref(X, 0):
        return X
    shape = partial_shape(X)
    n = const_value(steps)
    if n is not None:
        n = int(np.asarray(n).reshape(-1)[0])
        if (n < 0 and unbounded) or (shape is not None and shape[0] is not None
                                     and n >= shape[0]):
            return X
        end = np.asarray([n], np.int64)
    else:
        end = em.op("Reshape", [em.op("Cast", [steps], {"to": 7}), np.asarray([1], np.int64)])
        if unbounded:
            neg = em.op("Less", [end, np.asarray([0], np.int64)])
            end = em.op("Where", [neg, np.asarray([_I64_MAX], np.int64), end])
    if reverse:  # the last n entries
        start = em.op("Neg", [end]) if isinstance(end, Value) else -end
        return em.op("Slice", [X, start, np.asarray([_I64_MAX], np.int64),
                               np.asarray([0], np.int64)])
    return em.op("Slice", [X, np.asarray([0], np.int64), end, np.asarray([0], np.int64)])


def _unreversed(em: Emitter, X: Value) -> Value | None:
    """X reversed along axis 0, computed without the reversal, when X is a time-reversed
    input (``ReverseSequence`` over the whole length) seen through shape ops: those ops
    are applied to the input itself. None otherwise."""
    chain, cur, axis = [], X, 0
    while True:
        p = cur.producer
        if p is None or p.domain != "":
            return None
        if p.op_type == "ReverseSequence" and len(p.inputs) == 2 and \
                int(p.attrs.get("time_axis", 0)) == axis:
            lens, ref = uniform_ref(p.inputs[1]), axis_ref(p.inputs[0], axis)
            if lens is None or lens != ref:
                return None
            break
        axis = inner_axis(p, axis)
        if axis is None:
            return None
        chain.append(p)
        cur = p.inputs[0]
    v = p.inputs[0]
    for n in reversed(chain):
        v = em.node(n.op_type, [v, *n.inputs[1:]], dict(n.attrs), version=n.version).outputs[0]
    return v


def _batch(em: Emitter, X: Value, h0: Value) -> Value | None:
    """X's batch as a ``[1]`` tensor, or None when h0 has it already (statically)."""
    xs, hs = partial_shape(X), partial_shape(h0)
    if (xs is not None and hs is not None and len(xs) == 3 and len(hs) == 2
            and xs[1] is not None and xs[1] == hs[0]):
        return None
    shape = em.op("Shape", [X])
    return em.op("Slice", [shape, np.asarray([1], np.int64), np.asarray([2], np.int64),
                           np.asarray([0], np.int64)])


def _expand(em: Emitter, s: Value, batch: Value | None, H: int):
    """State `s` broadcast to `[batch, H]` (as it is when `batch` is None)."""
    if batch is None:
        return s
    dims = em.concat([batch, np.asarray([H], np.int64)], 0)
    return em.op("Expand", [s, dims])


# ----------------------------------------------------------------------------- directions


def _pairable(f: Node, b: Node) -> bool:
    """Whether operators `f` and `b` differ in nothing but their direction, weights and
    states (and read the same input)."""
    fi, bi = list(f.inputs) + [None] * 8, list(b.inputs) + [None] * 8
    attrs = [{k: v for k, v in n.attrs.items() if k != "direction"} for n in (f, b)]
    return (f.op_type == b.op_type and equivalent(strip(fi[0]), strip(bi[0]))
            and all(partial_shape(x) == partial_shape(y) for x, y in zip(fi[1:3], bi[1:3]))
            and repr(sorted(attrs[0].items())) == repr(sorted(attrs[1].items()))
            and all((x is None) == (y is None) for x, y in zip(fi[3:8], bi[3:8])))


def merge_directions(graph: Graph) -> int:
    """Merge forward/reverse operator pairs of `graph` (not its subgraphs) over one input into
    bidirectional operators; the number merged."""
    ops = [n for n in graph.nodes if n.op_type in GATES and n.domain == ""
           and n.attrs.get("direction") in ("forward", "reverse") and not n.attrs.get("layout")
           and (len(n.inputs) < 5 or n.inputs[4] is None)
           and all(partial_shape(v) is not None for v in n.inputs[1:3])]
    merged = 0
    used: set[int] = set()
    for f in ops:
        if f.attrs["direction"] != "forward" or id(f) in used:
            continue
        b = next((n for n in ops if n.attrs["direction"] == "reverse" and id(n) not in used
                  and _pairable(f, n)), None)
        if b is None or _depends(graph, b, f) or _depends(graph, f, b):
            continue
        used |= {id(f), id(b)}
        _merge(graph, f, b)
        merged += 1
    if merged:
        toposort(graph)
    return merged


def _depends(graph: Graph, node: Node, on: Node) -> bool:
    """Whether `node` reads, directly or through other nodes of `graph`, an output of `on`."""
    producer = {v.uid: n for n in graph.nodes for v in n.outputs}
    todo, seen = [node], set()
    while todo:
        n = todo.pop()
        for v in n.reads():
            p = producer.get(v.uid)
            if p is on:
                return True
            if p is not None and id(p) not in seen:
                seen.add(id(p))
                todo.append(p)
    return False


def _merge(graph: Graph, f: Node, b: Node) -> None:
    em = Emitter(graph, None, f.name or "cell")
    ins = []
    fi, bi = list(f.inputs) + [None] * 8, list(b.inputs) + [None] * 8
    for k in range(8):
        if fi[k] is None:
            ins.append(None)
        elif k == 0:
            ins.append(fi[0])
        else:
            pair = [const_value(v) if const_value(v) is not None else v for v in (fi[k], bi[k])]
            ins.append(em.concat(pair, 0))
    while ins and ins[-1] is None:
        ins.pop()
    attrs = dict(f.attrs, direction="bidirectional")
    for k in ("activations", "activation_alpha", "activation_beta"):
        if k in attrs:
            attrs[k] = list(f.attrs[k]) + list(b.attrs[k])
    op = em.node(f.op_type, ins, attrs, outputs=len(f.outputs), version=VERSION,
                 name=f.name)
    pairs = []
    for side, node in enumerate((f, b)):
        for k, out in enumerate(node.outputs):
            axis = 1 if k == 0 else 0
            pairs.append((em.slice(op.outputs[k], axis, side, side + 1), out))
    em.bind(pairs)
    at = graph.nodes.index(f)
    graph.nodes[at:at + 1] = em.nodes
    graph.nodes.remove(b)
