"""Loops whose whole body is a recurrent cell become one fused ``RecurrentSequence`` node.

An LSTM, GRU or RNN written as a loop (ONNX Loop or Scan, OpenVINO TensorIterator, at any
depth) runs one small matrix product and a dozen element-wise ops per step, each dispatched
on its own. Recognised (`match`: decomposed gates in any spelling, or a one-step cell
operator), the loop is replaced by nodes computing the cell's weights in the ONNX operators'
layout (folded into constants when they are constant), the step input as one sequence, one
``itergraph.RecurrentSequence`` node, and the loop's outputs from its results.

``RecurrentSequence`` (domain ``itergraph``, version 1), the fused recurrence of one
direction. Inputs: ``X [T, B', I]``, ``W [G*H, I]``, ``R [G*H, H]``, ``B [G*H]``
(optional), ``RB [G*H]`` (optional), ``initial_h``, ``initial_c`` (LSTM), ``P [3H]`` (LSTM
peepholes i, o, f; optional), ``steps`` (optional int scalar), ``mask`` and
``initial_output`` (optional, below): the ONNX operators' weights of one direction. Gates
in their order (LSTM i, o, f, c; GRU z, r, h), every gate's pre-activation ``x W_g^T +
h R_g^T + B_g + RB_g`` (GRU ``h``: ``x W_h^T + B_h + (r * h) R_h^T + RB_h``, with
``linear_before_reset`` ``x W_h^T + B_h + r * (h R_h^T + RB_h)``), then the ONNX cell
equations with the attributes
``cell`` (``"LSTM"``, ``"GRU"``, ``"RNN"``), ``hidden_size``, ``activations``,
``activation_alpha``, ``activation_beta``, ``clip``, ``linear_before_reset``,
``input_forget`` (as the ONNX operators, one direction). Step k reads ``X[k]``
(``reverse=1``: ``X[T-1-k]``), and ``mask[k]`` likewise when the optional ``mask [T, B']``
(boolean; Keras masking, `mask`) is given: an entry whose mask is false at a step keeps
its states through it, and ``Y`` holds, with the optional ``initial_output [B, H]``, the
layer's output: ``initial_output`` until the entry's first unmasked step, then h; with
``mask_output="fill"``, h where the step's mask holds and ``initial_output`` elsewhere. The step
count n is T without `steps`; else `steps` (a
negative one is 0 with ``negative_steps="zero"``, T with ``"unbounded"``), at most T, and
above T an error when ``strict=1``. The batch is that of X and the initial states
broadcast together. Outputs: ``Y [n, B, H]`` (``Y[k]``: h after step k), the final h,
(LSTM) c and, optionally, the last entry of Y (``initial_output`` after zero steps: the
layer's output a loop carries). A run of zero steps gives an empty Y and the initial states
as given; with ``empty_dims`` ``[B, H]`` (-1: as the run has them), Y is ``[0, B, H]``, so
that outputs made of it are the loop's zero-iteration stacks (declared element shapes,
unknown dimensions as 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ...errors import where
from ...ir.graph import Graph, Value
from ...ir.loop import Concat, Last, Loop
from ...ir.types import TensorType
from .. import iteration_gather as gather_pass
from ..base import Pass
from ..loop_motion import LoopScope, const_value
from ..passthrough_condition import passes_through
from .counter import copy_loop, counted_copy
from .emit import Emitter, Operand, Unfit
from .fission import splits
from .glue import StepInput, apply, chain_shape, lift, output_chain, step_input
from .mask import MaskMatch, match_mask
from .match import GATES, CellMatch, match_cell, strip

OP = "RecurrentSequence"
DOMAIN = "itergraph"
#: anchor kinds whose values over the steps are the fused node's Y (`mask`: with an
#: output carry, ``"y"`` is the layer's output and the hidden state's select only ``"hfinal"``)
SEQUENCE_KINDS = ("h", "y")


class FuseCells(Pass):
    """Loops whose whole body is a recurrent cell become one fused ``RecurrentSequence`` node.

    Applies to: every canonical `Loop` at any depth whose body is one LSTM, GRU or RNN cell
    as `match` recognises it, and nothing else: no precondition; a condition that is
    absent, a constant true or the incoming condition passed through; one step input, either
    the only sliced input (part size 1, stride 1 or -1, the whole axis) or ``Gather(X,
    iteration number)`` with a trip count; carried values that are the cell's states or
    passed through unchanged, or a list starting empty that the new hidden state is appended
    to (``SequenceInsert``, what ``torch.onnx`` writes for ``outputs.append(h)``); outputs that
    are the states' final values, a passed-through value, that list, or the new hidden state
    concatenated over the iterations (no padded length),
    possibly through glue (`glue`: ``Unsqueeze``, ``Squeeze``, ``Reshape``,
    ``Identity``); every matrix and bias of static shape. With Keras masking (`mask`):
    every state selected by one boolean step input, and an output the same mask selects from
    the new hidden state (carried, or against a loop-invariant fill). Also every while loop
    that is such a loop once its time counters are read as a trip count (`place_fusable`,
    `counter`: TensorFlow's ``t + 1 < L`` loops as tf2onnx and OpenVINO write Keras
    RNNs, ``tf.scan``'s two counters), and the cells stacked in one loop, split first into a
    loop per cell (`fission`; each piece that is a cell is fused). The loop is replaced
    by the nodes of the module docstring, which produce its very output values.

    Returns: the number of loops replaced.

    Guarantees: outputs equal the loop's up to floating-point rounding (matrix products
    accumulate in another order, weights are summed before multiplying where the body adds
    several products of one source) for every input, zero iterations included; where the
    loop fails by iterating beyond its step input or past ``max_iterations``, the fused node
    fails with the same error class.
    """

    name = "fuse_cells"
    in_place = True

    def __call__(self, graph: Graph, kept: tuple[Value, ...] = ()) -> int:
        """`kept`: values the node owning `graph` takes from it besides its outputs."""
        done = 0
        for node in list(graph.nodes):
            for g in node.subgraphs():
                done += self(g, tuple(node.body_results()))
            if isinstance(node, Loop):
                done += _fuse(graph, node, kept)
        return done


fuse_cells = FuseCells()


@dataclass
class Plan:
    scope: LoopScope
    step: StepInput
    cell: CellMatch
    outputs: list  # per output port: ("outer", value) | ("last"|"concat", kind, axes, chain)
    mask: MaskMatch | None = None  # Keras masking (`mask`)


def analyse(loop: Loop) -> Plan | None:
    """What `fuse_cells` would do with `loop`, or None when it leaves it alone."""
    if loop.precondition is not None or not _free_running(loop):
        return None
    scope = LoopScope(loop)
    mask = match_mask(loop, scope)
    si = step_input(loop, scope, frozenset() if mask is None else frozenset({mask.root.uid}))
    if si is None:
        return None
    lists = {id(c): v for c in loop.carried if (v := _appended(c)) is not None}
    outs = set() if mask is None else mask.outputs
    states = [c if mask is None else mask.view(c) for c in loop.carried
              if strip(c.result) is not c.param and id(c) not in lists
              and c.param.uid not in outs]
    cell = match_cell(loop, scope, si.values, states)
    if cell is None:
        return None
    shape = chain_shape(si.entry, si.chains[cell.x.uid])
    if shape is None or len(shape) != 2:
        return None
    if mask is not None:
        anchors = _masked_anchors(cell, mask, si)
        if anchors is None:
            return None
        cell = replace(cell, anchors=anchors)
    outputs = []
    for port in loop.output_ports:
        carried = next((c for c in loop.carried if c.result is port.result), None)
        out = (_list_output(carried, lists[id(carried)], cell, scope)
               if carried is not None and id(carried) in lists else
               _output(port, cell, scope, loop))
        if out is None:
            return None
        outputs.append(out)
    return Plan(scope, si, cell, outputs, mask)


def _masked_anchors(cell: CellMatch, mask: MaskMatch, si: StepInput) -> dict | None:
    """The anchors of a masked cell (`mask`): the selected states instead of the
    values selected from (those are not the layer's values), ``"y"`` for the output (carried
    or filled). None unless every selected value is a state of the cell or the output of its
    new hidden state, and the mask is one boolean per batch entry read in the step order of
    x."""
    m = mask.source
    shape = chain_shape(m.entry, m.chains[mask.value.uid])
    fills = {strip(f).uid for _, f in mask.fills.values()}
    if (m.reverse != si.reverse or shape is None or len(shape) not in (1, 2)
            or (len(shape) == 2 and shape[1] != 1) or len(mask.outputs) > 1
            or len(fills) > 1 or (fills and mask.outputs)):
        return None
    kinds = {cell.h.uid: "h"} | ({} if cell.c is None else {cell.c.uid: "c"})
    if set(mask.new) - mask.outputs != set(kinds):
        return None
    anchors = {}
    h_new = strip(mask.new[cell.h.uid])
    output = mask.outputs or mask.fills
    for uid, kind in kinds.items():
        got = cell.anchors.get(strip(mask.new[uid]).uid)
        if got is None or got[0] != kind:
            return None
        # with an output, Y is the output, not h: h's select gives only the final h
        anchors[strip(mask.selected[uid]).uid] = ("hfinal" if kind == "h" and output
                                                  else kind, got[1])
    axes = cell.anchors[h_new.uid][1]
    for uid in mask.outputs:
        if strip(mask.new[uid]) is not h_new:
            return None
        anchors[strip(mask.selected[uid]).uid] = ("y", axes)
    for uid, (new, _) in mask.fills.items():
        if strip(new) is not h_new:
            return None
        anchors[uid] = ("y", axes)
    return anchors


def _fuse(graph: Graph, loop: Loop, kept: tuple[Value, ...]) -> int:
    """Fuse `loop`, a node of `graph`, or the cells stacked in it (`fission`): the
    number of fused nodes made (stacked cells: the leading ones that are cells)."""
    found = place_fusable(graph, loop, kept)
    if found is not None:
        loop, plan, restore = found
        if replace_loop(graph, loop, plan):
            return 1
        restore()
        return 0
    stacked = place_stacked(graph, loop, kept)
    if stacked is None:
        return 0
    pieces, restore = stacked
    if not replace_loop(graph, *pieces[0]):
        restore()
        return 0
    return 1 + sum(plan is not None and replace_loop(graph, piece, plan)
                   for piece, plan in pieces[1:])


def place_stacked(graph: Graph, loop: Loop, kept: tuple[Value, ...] = ()
                  ) -> tuple[list[tuple[Loop, Plan | None]], Callable[[], None]] | None:
    """The cells stacked in `loop` (`fission`), each a loop of its own put in `loop`'s
    place in `graph`, with its plan (the last piece's None when it is no cell); None when no
    cell splits off. The function returned puts `graph` back as it was (before any
    rewrite)."""
    copy, restore = place_canonical(graph, loop, kept)
    pieces: list[tuple[Loop, Plan | None]] = []
    rest: Loop | None = copy
    while rest is not None:
        found = _first_cell(rest)
        if found is None:
            break
        first, rest, plan = found
        pieces.append((first, plan))
        plan = analyse(rest)
        if plan is not None:
            pieces.append((rest, plan))
            rest = None
    if not pieces:
        restore()
        return None
    if rest is not None:
        pieces.append((rest, None))
    at = graph.nodes.index(copy)
    graph.nodes[at:at + 1] = [piece for piece, _ in pieces]

    def undo() -> None:
        graph.nodes[at:at + len(pieces)] = [copy]
        copy.set_output_ports(list(copy.output_ports))
        restore()

    return pieces, undo


def _first_cell(loop: Loop) -> tuple[Loop, Loop, Plan] | None:
    """The first split of `loop` (`fission.splits`) whose first loop is a cell, with
    that cell's plan; the second loop's steps declared (`_declare_steps`)."""
    for first, second in splits(loop):
        plan = analyse(first)
        if plan is not None:
            _declare_steps(second, first, plan)
            return first, second, plan
    return None


def _declare_steps(second: Loop, first: Loop, plan: Plan) -> None:
    """The sliced inputs `second` reads from `first`'s stacked hidden states: declared as
    the cell's ``[B, H]`` where the body left their shape unsaid (the fused node's outputs
    have no declared shape for `glue` to see)."""
    from_first = {p.output.uid: p.result for p in first.output_ports}
    for p in second.sliced:
        r = from_first.get(p.value.uid)
        kind = None if r is None else plan.cell.anchors.get(strip(r).uid)
        t = p.param.type
        if kind is not None and kind[0] in SEQUENCE_KINDS and not kind[1] and (
                not isinstance(t, TensorType) or t.shape is None):
            dtype = plan.cell.h.type.dtype if isinstance(plan.cell.h.type, TensorType) else (
                t.dtype if isinstance(t, TensorType) else None)
            p.param.type = TensorType(dtype, [None, plan.cell.hidden])


def place_canonical(graph: Graph, loop: Loop, kept: tuple[Value, ...] = ()
                    ) -> tuple[Loop, Callable[[], None]]:
    """A copy of `loop` in the form `analyse` knows (see `place_fusable`), put in `loop`'s
    place in `graph`, and the function that puts `graph` back as it was."""
    at, first = graph.nodes.index(loop), len(graph.initializers)
    read = {v.uid for n in graph.nodes if n is not loop for v in n.reads()}
    read |= {v.uid for v in (*graph.outputs, *kept) if v is not None}
    copy, extra = counted_copy(graph, loop, read) or (copy_loop(loop), [])
    if passes_through(copy):
        copy.condition_result = None
    gather_pass.iteration_gather.rewrite_loop(graph, copy)

    def restore() -> None:
        graph.nodes[at:at + 1 + len(extra)] = [loop]
        loop.set_output_ports(list(loop.output_ports))  # its outputs' producer again
        del graph.initializers[first:]

    graph.nodes[at:at + 1] = [*extra, copy]
    return copy, restore


def place_fusable(graph: Graph, loop: Loop, kept: tuple[Value, ...] = ()
                  ) -> tuple[Loop, Plan, Callable[[], None]] | None:
    """`loop` and its plan (`analyse`), or, when `loop` itself has none, a copy of it in the
    form `analyse` knows, put in `loop`'s place in `graph`, and its plan: TensorFlow's while
    loop over a time counter as a counted loop (`counter`, with the nodes computing the
    trip count put before it), an ONNX condition handed on unchanged dropped, OpenVINO's
    ``Gather(X, current iteration)`` a sliced input. The third item puts `graph` back as it
    was (the caller calls it when it does not rewrite the copy). None when neither has a plan.
    `kept`: values the node owning `graph` takes from it besides its outputs."""
    plan = analyse(loop)
    if plan is not None:
        return loop, plan, lambda: None
    copy, restore = place_canonical(graph, loop, kept)
    plan = analyse(copy)
    if plan is None:
        restore()
        return None
    return copy, plan, restore


def fused_kind(graph: Graph, loop: Loop) -> str | None:
    """The cell kind (``LSTM``, ``GRU``, ``RNN``) `fuse_cells` fuses `loop`, a node of
    `graph`, as (cells stacked in it, each fused: their kinds joined by ``+``, first cell
    first); None when it leaves it a loop. `graph` is left as it was."""
    found = place_fusable(graph, loop)
    if found is not None:
        _, plan, restore = found
        restore()
        return plan.cell.kind
    stacked = place_stacked(graph, loop)
    if stacked is None:
        return None
    pieces, restore = stacked
    restore()
    if any(plan is None for _, plan in pieces):
        return None
    return "+".join(plan.cell.kind for _, plan in pieces)




def _appended(c) -> Value | None:
    """The value a carried list gets appended in every iteration (``SequenceInsert(list,
    v)``, torch's ``outputs.append(h)``), when it starts empty (``SequenceEmpty``)."""
    p = c.result.producer
    init = c.value.producer
    if (p is None or p.op_type != "SequenceInsert" or p.domain != ""
            or len([v for v in p.inputs if v is not None]) != 2 or p.inputs[0] is not c.param
            or init is None or init.op_type != "SequenceEmpty"):
        return None
    return p.inputs[1]


def _list_output(c, appended: Value, cell: CellMatch, scope: LoopScope):
    found = output_chain(appended, cell.anchors, scope)
    if found is None or found[0] not in SEQUENCE_KINDS:
        return None
    kind, axes, chain = found
    entry = chain_shape(_unit_axes((None, cell.hidden), axes), chain)
    return None if entry is None else ("list", kind, axes, chain, len(entry))


def _free_running(loop: Loop) -> bool:
    """Whether the loop's condition can never stop it."""
    r = loop.condition_result
    if r is None:
        return True
    if strip(r) is loop.condition_param and loop.condition_param is not None:
        return loop.initial_condition is None or _true(loop.initial_condition)
    return _true(r) and (loop.initial_condition is None or _true(loop.initial_condition))


def _true(v: Value) -> bool:
    c = const_value(strip(v))
    return c is not None and c.size == 1 and bool(c.reshape(()))


def _output(port, cell: CellMatch, scope: LoopScope, loop: Loop):
    r = strip(port.result)
    if isinstance(port, Last):
        for c in loop.carried:
            if r is c.param and strip(c.result) is c.param:
                return ("outer", c.value)
        if r.uid in scope.bound:
            return ("outer", scope.bound[r.uid])
        if r.uid not in scope.defined:
            return ("outer", r)
        found = output_chain(r, cell.anchors, scope)
        return None if found is None else ("last", *found)
    if not isinstance(port, Concat) or port.length is not None:
        return None
    found = output_chain(r, cell.anchors, scope)
    if found is None or found[0] not in SEQUENCE_KINDS:
        return None
    kind, axes, chain = found
    entry = chain_shape(_unit_axes((None, cell.hidden), axes), chain)
    if entry is None:
        return None
    if not port.new_axis:
        if not -len(entry) <= port.axis < len(entry) or entry[port.axis % len(entry)] != 1:
            return None
    elif not -len(entry) - 1 <= port.axis <= len(entry):
        return None
    return ("concat", kind, axes, chain, len(entry))


def _unit_axes(shape: tuple, axes: tuple[int, ...]) -> tuple:
    out = list(shape)
    for a in sorted(axes):
        out.insert(a, 1)
    return tuple(out)


# ----------------------------------------------------------------------------- rewrite


def _sum(em: Emitter, parts: list[Operand], zeros: tuple, dtype) -> Operand:
    if not parts:
        return np.zeros(zeros, dtype)
    total = parts[0]
    for p in parts[1:]:
        total = em.add(total, p)
    return total


def _weights(em: Emitter, cell: CellMatch):
    """(W, R, B, RB, P) operands in the ONNX operators' layout and gate order (B, RB, P may
    be None)."""
    H, x = cell.hidden, cell.x.uid
    ws, rs, bs, rbs = [], [], [], []
    first = next(m for f in cell.gates.values() for s, m in f.terms if s == x)
    n_in = first.shape[0]
    dtype = None
    for letter in GATES[cell.kind]:
        f = cell.gates[letter]
        xw = [em.inv(m) for s, m in f.terms if s == x]
        hr = [em.inv(m) for s, m in f.terms if s != x]
        rb = []
        if cell.inner is not None and letter == "h":
            hr += [em.inv(m) for _, m in cell.inner.terms]
            rb = [em.inv(b) for b in cell.inner.bias]
        if dtype is None:
            dtype = em.dtype((xw or hr or [np.zeros(0, np.float32)])[0])
        ws.append(_sum(em, xw, (n_in, H), dtype))
        rs.append(_sum(em, hr, (H, H), dtype))
        bs.append([em.inv(b) for b in f.bias])
        rbs.append(rb)
    W, R = em.transpose(em.concat(ws, 1), [1, 0]), em.transpose(em.concat(rs, 1), [1, 0])
    B = None if not any(bs) else em.concat([_sum(em, b, (H,), dtype) for b in bs], 0)
    RB = None if not any(rbs) else em.concat([_sum(em, b, (H,), dtype) for b in rbs], 0)
    P = None
    if cell.peep:
        P = em.concat([em.inv(cell.peep[g]) if g in cell.peep else np.zeros(H, dtype)
                       for g in "iof"], 0)
    return W, R, B, RB, P


def _sequence(em: Emitter, si: StepInput, v: Value) -> Operand:
    """`v` (the step input through glue) of every step, ``[T, B, I]``, in storage order."""
    whole = em.outer(si.whole)
    rank = len(si.entry) + (0 if si.keep_axis else 1)
    if si.axis != 0:
        perm = [si.axis] + [a for a in range(rank) if a != si.axis]
        whole = em.transpose(whole, perm)
    if si.keep_axis:
        whole = em.unsqueeze(whole, [si.axis + 1])
    return lift(em, whole, si.chains[v.uid], len(si.entry))


def replace_loop(graph: Graph, loop: Loop, plan: Plan) -> bool:
    """Replace `loop` by the fused node; False (and `graph` as it was) when the replacement
    would read a value that neither `graph` defines nor `loop` reads (a body value, or an
    outer value of an enclosing scope the loop only reached through a capture chain)."""
    cell, si = plan.cell, plan.step
    n_inits = len(graph.initializers)
    em = Emitter(graph, plan.scope, loop.name or "loop")
    X = _sequence(em, si, cell.x)
    try:
        W, R, B, RB, P = _weights(em, cell)
    except Unfit:
        del graph.initializers[n_inits:]
        return False
    carried = {c.param.uid: c for c in loop.carried}
    h0 = carried[cell.h.uid].value
    c0 = carried[cell.c.uid].value if cell.c is not None else None
    dtype = h0.type.dtype if isinstance(h0.type, TensorType) else None
    outs = [Value(f"{loop.name}/Y", TensorType(dtype, None)),
            Value(f"{loop.name}/Y_h", TensorType(dtype, None))]
    if cell.kind == "LSTM":
        outs.append(Value(f"{loop.name}/Y_c", TensorType(dtype, None)))
    attrs = dict(cell.attrs, cell=cell.kind, hidden_size=cell.hidden, reverse=int(si.reverse),
                 strict=int(si.strict), negative_steps=loop.negative_trip_count
                 if loop.negative_trip_count == "unbounded" else "zero")
    empty = _empty_dims(loop, plan)
    if empty is not None:
        attrs["empty_dims"] = empty
    mask = o0 = None
    if plan.mask is not None:
        mask = em.reshape(_sequence(em, plan.mask.source, plan.mask.value),
                          np.array([0, -1], np.int64))
        o0 = next((carried[u].value for u in plan.mask.outputs), None)
        if plan.mask.fills:
            o0 = em.outer(next(iter(plan.mask.fills.values()))[1])
            attrs["mask_output"] = "fill"
    last_y = [Value(f"{loop.name}/Y_o", TensorType(dtype, None))] if any(
        how[0] == "last" and how[1] == "y" for how in plan.outputs) else []
    node = em.node(OP, [X, W, R, B, RB, h0, c0, P, loop.trip_count, mask, o0], attrs,
                   outputs=outs + last_y, domain=DOMAIN, version=1, name=loop.name)
    node.meta.update(loop.meta)
    node.meta["loop_where"] = where(loop)  # errors the fused node reports name the loop
    finals = {"h": outs[1], "hfinal": outs[1], "c": outs[2] if len(outs) > 2 else None}
    if len(node.outputs) > len(outs):
        finals["y"] = node.outputs[-1]
    pairs = []
    for port, how in zip(loop.output_ports, plan.outputs):
        if how[0] == "outer":
            x: Operand = how[1]
        elif how[0] == "last":
            _, kind, axes, chain = how
            x = apply(em, em.unsqueeze(finals[kind], list(axes)), chain)
        elif how[0] == "list":
            _, _, axes, chain, _ = how
            whole = lift(em, em.unsqueeze(outs[0], [a + 1 for a in sorted(axes)]), chain,
                         2 + len(axes))
            x = em.node("SplitToSequence", [whole], {"axis": 0, "keepdims": 0},
                        version=11).outputs[0]
        else:
            _, _, axes, chain, rank = how
            x = _concat(em, outs[0], axes, chain, rank, port)
        pairs.append((x, port.output))
    known = graph.defined() | {v.uid for v in loop.reads()} | \
        {v.uid for n in em.nodes for v in n.outputs} | {v.uid for v in graph.initializers}
    read = [v for n in em.nodes for v in n.reads()] + [x for x, _ in pairs
                                                         if isinstance(x, Value)]
    if any(v.uid not in known for v in read):
        del graph.initializers[n_inits:]
        return False
    em.bind(pairs)
    at = graph.nodes.index(loop)
    graph.nodes[at:at + 1] = em.nodes
    return True


def _empty_dims(loop: Loop, plan: Plan) -> list[int] | None:
    """``[B, H]`` of Y after zero steps (-1: the run's), so that the outputs made of it are the
    loop's zero-iteration stacks: those have the declared element shape with unknown
    dimensions as 0 (`backends.numpy.kernels.loop.outputs`). One unknown dimension is taken
    to be the batch, more to be both. None where every stacked element shape is static."""
    unknown = 0
    for port, how in zip(loop.output_ports, plan.outputs):
        if how[0] not in ("outer", "last"):
            t = port.result.type
            shape = t.shape if isinstance(t, TensorType) else None
            unknown = max(unknown, 2 if shape is None else
                          sum(not isinstance(d, int) for d in shape))
    return None if not unknown else [0, 0] if unknown > 1 else [0, -1]


def _concat(em: Emitter, y: Value, axes: tuple, chain: list, rank: int, port: Concat):
    """A Concat output from Y ``[n, B, H]`` (entries: `chain` of h with `axes` inserted)."""
    whole = lift(em, em.unsqueeze(y, [a + 1 for a in sorted(axes)]), chain, 2 + len(axes))
    if port.reverse:
        whole = em.reverse(whole, 0)
    if port.new_axis:
        a = port.axis % (rank + 1)
    else:
        a = port.axis % rank
        whole = em.squeeze(whole, [a + 1])
    if a:
        r = rank + 1 if port.new_axis else rank
        whole = em.transpose(whole, [*range(1, a + 1), 0, *range(a + 1, r)])
    return whole
