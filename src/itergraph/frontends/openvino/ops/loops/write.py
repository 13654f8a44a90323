"""Canonical `Loop` -> OpenVINO ``TensorIterator-1`` / ``Loop-5``; ONNX ``If`` -> ``If-8``.

A loop is written as a TensorIterator when that form says it all: no trip count, initial
condition, condition, precondition or iteration parameter, at least one sliced input. Anything
else becomes a Loop-5 (trip count -1 when absent, initial condition ``true`` when absent,
a constant ``true`` execution condition when the loop has none).

Port translation:
- `Sliced` -> ``axis``/``start``/``end``/``stride``/``part_size`` (OpenVINO only runs whole-axis
  ranges with ``part_size == |stride|``: a partial range is cut out by a ``Slice`` before the
  loop; ``keep_axis=False`` adds a ``Squeeze`` in the body);
- `Invariant`, values the body captures from enclosing graphs, and the ONNX condition
  parameter (always true inside a running body) -> inputs without ``axis``;
- `Carried` -> input plus back edge;
- `Last` -> output without ``axis``; `Concat` -> output with ``axis`` (``new_axis=True`` adds an
  ``Unsqueeze`` in the body; the per-iteration size along the axis must be known, it is the
  stride; ``reverse`` is a forward concatenation reversed after the loop); a ``length`` pads
  the result with zeros after the loop;
- ``negative_trip_count="zero"`` (ONNX) clamps the trip count at 0, since OpenVINO treats -1 as
  unbounded.
A TensorRT precondition has no OpenVINO form and is refused, naming the loop.

OpenVINO 2026.4 problems worked around (its CPU plugin would otherwise refuse the IR or compute
something else):
- a body Result fed straight by a body Parameter breaks its loop optimisations
  (EliminateLoopInputsOutputs), and a back edge fed straight by another back-edged Parameter
  (``a, b = a + b, a``) is updated after that Parameter, not with it: the Result gets a copy
  of the Parameter (`_pass_through`), a ``Multiply`` by one, since OpenVINO folds a
  ``Convert`` to the same type away and the problems come back;
- Loop-5 does not stop at the end of its sliced inputs: the trip count is bounded by the
  slice count (`_bound_by_slices`); Loop-5 only slices forward, one by one: reversed and
  partial slicings are done before the loop;
- a TensorIterator with a reversed concatenated output (negative ``stride``) and a
  ``GRUCell`` body (the form OpenVINO's converters write) also walks its forward sliced input
  backwards in the CPU plugin: reversed outputs are never written as such, the pieces are
  stacked forward and reversed after the loop (as for Loop-5);
- a value an outer ``Const`` layer carries (an ONNX ``Constant`` node's output, such as the
  ``true`` that torch.onnx's loops return as their condition) passed in as a body Parameter
  makes ``compile_model`` throw ``vector::_M_range_check`` when that Parameter feeds the
  execution condition: captured constants, and ``Convert``s of them, which OpenVINO folds into
  constants, are repeated inside the body (`_copy_const`); an unread ``current_iteration``
  Parameter makes it throw the same, so the iteration number is written only where the body
  reads it (`_bind_special_params`);
- a back-edged Parameter gets the shape of the value entering the loop, widened to what the
  body returns only for back edges that are also Loop outputs: a cache grown by ``Concat``
  that the loop does not return, entering with a static shape, kept its first length (wrong
  values from the second iteration): such back edges are made outputs too
  (`_widening_outputs`), and a loop whose carried value is known to change shape is not a
  TensorIterator, which never widens;
- a loop condition reading an invariant input that OpenVINO has folded into a constant (a
  bound computed from shapes made static) makes ``compile_model`` throw
  ``vector::_M_range_check``: such inputs are carried unchanged (`_carry_condition_inputs`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from .....analysis.loop_features import growing_carried
from .....errors import UnsupportedError, where
from .....ir.graph import Graph, Node, Value
from .....ir.loop import Carried, Concat, Last, Loop, Sliced
from .....ir.types import DataType
from .....passes.dead_ports import slice_count
from .....passes.loop_facts import static_count
from .....semantics.empty_stack import zero_iteration_output
from ...elements import from_element_type, to_numpy
from ...export_table import exporter
from ...net_writer import NetWriter, Out, value_dtype, value_shape

#: The `Loop` flags the OpenVINO writer acts on (`ir.loop.loop_flags`), and those it leaves
#: out, with why: each of these only makes some inputs an execution error, and OpenVINO has
#: no op that raises; on every input the loop runs without error, the written loop computes
#: the same values.
HANDLES_LOOP_FLAGS = frozenset({"negative_trip_count"})
IGNORES_LOOP_FLAGS = {
    "strict_slices": "iterating beyond a sliced input's end is an error in the loop; the "
                     "written Loop-5 stops there (`_bound_by_slices`), a TensorIterator has "
                     "no trip count to go beyond it",
    "equal_slices": "sliced inputs of unequal lengths are an error in the loop; on equal "
                    "lengths running to the shortest is running to their one length, and "
                    "empty ones run no iteration, as the written Loop-5 does (a "
                    "TensorIterator is written only for non-zero static lengths)",
}

I64 = DataType.INT64
BOOL = DataType.BOOL
INT64_MAX = int(np.iinfo(np.int64).max)


def _merge_shape(a, b):
    return a if a is not None else b


class _Body:
    """A body network under construction, with its port_map and back edges. `as_ti`: the
    loop is written as a TensorIterator (its data inputs start at port 0, not 2)."""

    def __init__(self, w: NetWriter, scope: str, as_ti: bool):
        self.w = w
        self.bw = NetWriter(w.weights, parent=w, scope=scope)
        self.as_ti = as_ti
        self.ext_offset = 0 if as_ti else 2
        self.inputs: list[Out] = []  # outer ports feeding the layer (data inputs)
        self.in_entries: list[dict] = []
        self.out_entries: list[dict] = []
        self.back_edges: list[tuple[Carried, int]] = []  # port, its Parameter layer id
        self.result_of: dict[int, int] = {}  # value uid -> Result layer id
        self.sliced: list[tuple[Out, int]] = []  # Loop-5 sliced inputs (tensor, axis)
        self.param_layers: dict[int, Out] = {}  # Parameter layer id -> its port

    def add_input(self, outer: Out | None, name: str, dtype, shape, **attrs) -> Out:
        """A body Parameter fed by `outer` (``None``: not a layer input, e.g. the iteration)."""
        p = self.bw.parameter(name, dtype, shape, f"{self.bw.scope}parameter '{name}'")
        self.param_layers[p.layer] = p
        entry = {"internal_layer_id": p.layer, **attrs}
        if outer is not None:
            entry["external_port_id"] = self.ext_offset + len(self.inputs)
            self.inputs.append(outer)
        else:
            entry["external_port_id"] = -1
        self.in_entries.append(entry)
        return p

    def result(self, v: Value, out: Out | None = None) -> int:
        if out is None and v.uid in self.result_of:
            return self.result_of[v.uid]
        src = out if out is not None else self.bw.get(v)
        if src.layer in self.param_layers:
            src = _pass_through(self.bw, src)
        lid = self.bw.result(src)
        if out is None:
            self.result_of[v.uid] = lid
        return lid


def _pass_through(bw: NetWriter, src: Out) -> Out:
    """A copy of a body Parameter for a Result, made by an op OpenVINO keeps: its loop
    optimisations mishandle Results fed straight by Parameters (EliminateLoopInputsOutputs
    fails on them), and the CPU plugin updates a back edge fed straight by another back-edged
    Parameter after that Parameter's own update (``a, b = a + b, a`` goes wrong). A Convert to
    the same type is folded away, a ``Multiply`` by one (``LogicalAnd`` with true for booleans)
    is not."""
    if src.dtype == BOOL:
        return bw.one("LogicalAnd", "opset1", [src, bw.const(np.array(True))],
                      {"auto_broadcast": "numpy"}, dtype=BOOL, shape=src.shape)
    if src.dtype is not None:
        one = bw.const(np.ones((), dtype=to_numpy(src.dtype)), src.dtype)
        return bw.one("Multiply", "opset1", [src, one], {"auto_broadcast": "numpy"},
                      dtype=src.dtype, shape=src.shape)
    shape = bw.one("ShapeOf", "opset3", [src], {"output_type": "i64"}, dtype=I64)
    return bw.one("Reshape", "opset1", [src, shape], {"special_zero": False}, shape=src.shape)


def _param_shape(v: Value, outer: Out | None):
    """A body Parameter's shape: the body's declaration, else its input's. A declaration of
    another rank than the input (paddle2onnx declares a carried value that starts as a
    scalar placeholder with the rank the body gives it) is written as a dynamic rank:
    OpenVINO gives the Parameter its input's shape anyway, and a declaration the input
    contradicts makes the IR invalid."""
    declared, fed = value_shape(v), outer.shape if outer is not None else None
    if declared is not None and fed is not None and len(declared) != len(fed):
        return None
    return _merge_shape(declared, fed)


def _full_range(p: Sliced) -> bool:
    return (p.start, p.end) in ((0, -1), (-1, 0))


def _pre_slice(w: NetWriter, loop: Loop, p: Sliced, outer: Out) -> Out:
    """Cut the range ``[lo, hi)`` of a partial slicing out of `outer` before the loop."""
    def post(f: int) -> int:  # fence post -> numpy-style slice index
        if f >= 0:
            return f
        return INT64_MAX if f == -1 else f + 1

    s, e = p.start, p.end
    if (s >= 0) == (e >= 0):
        lo, hi = (s, e) if s <= e else (e, s)
    else:
        lo, hi = (s, e) if s >= 0 else (e, s)
    return w.one("Slice", "opset8", [outer, w.i64([post(lo)]), w.i64([post(hi)]), w.i64([1]),
                                     w.i64([p.axis])], dtype=outer.dtype)


@exporter("Loop", since=1, domain="itergraph")
def _loop(w: NetWriter, loop: Loop, ins: list[Out | None]):
    # `ins` follow `Loop.inputs`: trip count, initial condition, port values, Concat lengths
    trip_in, cond_in = ins[:2]
    port_ins = ins[2:2 + len(loop.input_ports)]
    length_ins = ins[2 + len(loop.input_ports):]
    empty = _zero_iteration_outputs(w, loop, port_ins)
    if empty is not None:
        return empty
    if loop.precondition is not None:
        _check_precondition(loop)
    as_ti = _as_tensor_iterator(loop)
    mark = w.mark()
    bd = _write_body(w, loop, port_ins, as_ti)
    changing = _changing_back_edges(bd)
    if as_ti and _known_to_change(bd, loop, changing):  # a TensorIterator never widens
        w.rollback(mark)
        bd = _write_body(w, loop, port_ins, as_ti=False)
        changing = _changing_back_edges(bd)
    elif as_ti:
        changing = []
    back = [(bd.result(c.result), plid) for c, plid in bd.back_edges]
    out_specs, posts, pads = _output_ports(w, bd, loop, length_ins)
    out_specs += _widening_outputs(bd, changing, len(out_specs))
    if bd.as_ti:
        outs = w.layer("TensorIterator", "opset1", bd.inputs, None, out_specs, name=loop.name)
    else:
        back += _carry_condition_inputs(bd, _execution_condition(bd, loop))
        trip = _trip_count(w, bd, loop, trip_in)
        cond = _initial_condition(w, loop, cond_in)
        outs = w.layer("Loop", "opset5", [trip, cond] + bd.inputs, None, out_specs,
                       name=loop.name)
    _attach_body(w.layers[-1], bd, back)
    outs = outs[:len(loop.output_ports)]
    for j, post in posts:
        outs[j] = post(outs[j])
    for j, op, length in pads:
        outs[j] = _pad_output(w, loop, j, op, outs[j], length)
    return outs


def _zero_iteration_outputs(w: NetWriter, loop: Loop,
                            port_ins: list[Out | None]) -> list[Out] | None:
    """The loop's outputs written without the loop when no input makes it iterate: a sliced
    input statically empty, or (`loop_facts.static_count`) a trip count of 0 or a constant
    false initial condition. OpenVINO's CPU plugin dies (SIGFPE) compiling a Loop whose
    static iteration count is 0, or refuses it ("Zero count of iteration not supported").
    Carried values leave as they came in; joined outputs are the empty arrays both backends
    give (`semantics.empty_stack`); each through a layer of its own (`_pass_through`), which
    carries the output's name (an input or a shared constant cannot). None when the loop
    may iterate, may fail (unequal scan lengths, strict slices), or an output after no
    iteration is not known."""
    counts = [slice_count(s) for s in loop.sliced]
    empty = 0 in counts and not loop.strict_slices \
        and not (loop.equal_slices and any(c != 0 for c in counts))
    if not empty and static_count(loop)[0] != 0:
        return None
    outs: list[Out] = []
    for port in loop.output_ports:
        if isinstance(port, Concat):
            arr = zero_iteration_output(port)
            if arr is None:
                return None
            outs.append(_pass_through(w, w.const(arr)))
            continue
        carried = loop.carried_for_result(port.result)
        src = None if carried is None else port_ins[loop.input_ports.index(carried)]
        if src is None:
            return None
        outs.append(_pass_through(w, src))
    return outs


def _write_body(w: NetWriter, loop: Loop, port_ins: list[Out | None], as_ti: bool) -> _Body:
    """The loop's body network, its Parameters bound to `port_ins`."""
    bd = _Body(w, f"{where(loop)} body: ", as_ti=as_ti)
    _bind_input_ports(w, bd, loop, port_ins)
    _bind_captures(w, bd, loop)
    _bind_special_params(bd, loop)
    bd.bw.write_nodes(loop.body)
    _check_carried_ranks(bd, loop)
    return bd


def _check_carried_ranks(bd: _Body, loop: Loop) -> None:
    """Refuse a carried value whose body result has another rank than the value it starts
    from (a list of declared shapes that the program breaks, e.g. ``z = z.unsqueeze(0)`` in
    one branch and ``z = z.sum(0)`` in the other): an OpenVINO back edge keeps the
    Parameter's rank (its CPU plugin refuses a dynamic one), and a rank written from either
    side holds in some iterations only."""
    read = {v.uid for n in loop.body.nodes for v in n.reads()}
    read.update(v.uid for v in loop.body_results())
    for c, _ in bd.back_edges:
        param = bd.bw.get(c.param)
        res = bd.bw.get(c.result)
        if c.param.uid not in read:
            continue  # no body layer reads it: its rank only reaches the loop output
        if param.shape is not None and res.shape is not None and \
                len(param.shape) != len(res.shape):
            i = loop.input_ports.index(c)
            raise UnsupportedError(
                f"{where(loop)}: carried value {i} ('{c.param.name}') enters the body with "
                f"rank {len(param.shape)} and leaves it with rank {len(res.shape)}; an "
                "OpenVINO Loop back edge keeps one rank (its CPU plugin needs a static rank)")


def _as_tensor_iterator(loop: Loop) -> bool:
    """Whether ``TensorIterator-1`` says it all: sliced inputs of static, non-zero lengths
    (OpenVINO's TensorIterator fails on zero iterations; ``Loop-5`` runs them), at least one of
    them read by the body (OpenVINO drops unread ones, and a TensorIterator left without one
    runs once), and nothing but ports; and no loop written as a TensorIterator in its body at
    any depth (OpenVINO refuses those: "No nested TensorIterator")."""
    if not (loop.trip_count is None and loop.initial_condition is None
            and loop.condition_result is None and loop.iteration_param is None
            and loop.condition_param is None and loop.precondition is None):
        return False
    if not all((slice_count(s) or 0) > 0 for s in loop.sliced):
        return False  # a length known only at run time may be 0, on which it fails
    read = {v.uid for n in loop.body.nodes for v in n.reads()}
    read.update(v.uid for v in loop.body_results())
    return (any(s.param.uid in read for s in loop.sliced)
            and not any(isinstance(n, Loop) and _as_tensor_iterator(n)
                        for _, n in loop.body.walk()))


def _bind_input_ports(w: NetWriter, bd: _Body, loop: Loop, outers: list[Out]) -> None:
    """A body Parameter per input port, fed by `outers` (plus a back edge for a `Carried`
    one)."""
    for i, (p, outer) in enumerate(zip(loop.input_ports, outers, strict=True)):
        name = p.param.name or f"param_{i}"
        if isinstance(p, Sliced):
            _sliced_input(w, bd, loop, i, p, outer, name)
            continue
        dt = outer.dtype or value_dtype(p.param)
        param = bd.add_input(outer, name, dt, _param_shape(p.param, outer))
        bd.bw.bind(p.param, param)
        if isinstance(p, Carried):
            bd.back_edges.append((p, param.layer))


def _bind_captures(w: NetWriter, bd: _Body, loop: Loop) -> None:
    """A body Parameter per value the body takes from enclosing graphs (port results that are
    outer values included): OpenVINO bodies see nothing but their Parameters. Constants, IR
    constants and values an outer ``Const`` layer carries alike (an ONNX ``Constant`` node's
    output), are repeated inside the body instead."""
    for v in loop.captured():
        if v.const is not None:
            continue
        outer = w.get(v, loop)
        copy = _copy_const(w, bd.bw, outer)
        if copy is not None:
            bd.bw.env[v.uid] = copy
            continue
        param = bd.add_input(outer, v.name or "capture", outer.dtype, outer.shape)
        bd.bw.env[v.uid] = param


def _const_layer(w: NetWriter, outer: Out) -> bool:
    """Whether `_copy_const` can repeat `outer` in a body."""
    scratch = NetWriter(w.weights, parent=w)
    return _copy_const(w, scratch, outer) is not None


def _copy_const(w: NetWriter, bw: NetWriter, outer: Out) -> Out | None:
    """A copy in body `bw` of the constant layers computing `outer`: a ``Const`` layer (same
    bytes in the ``.bin``), or a ``Convert`` of one (torch.onnx's ``Cast`` of a ``Constant``,
    which OpenVINO folds into a ``Const``); None for anything else."""
    el = w.layers[outer.layer]
    if outer.dtype is None:
        return None
    if el.get("type") == "Const":
        return bw.one("Const", "opset1", [], dict(el.find("data").attrib), dtype=outer.dtype,
                      shape=outer.shape, name=el.get("name", ""))
    if el.get("type") != "Convert":
        return None
    src = next((e for e in w.edges if e[2] == outer.layer and e[3] == 0), None)
    if src is None:
        return None
    src_el = w.layers[src[0]]
    if src_el.get("type") != "Const":
        return None
    dt = from_element_type(src_el.find("data").get("element_type"), el.get("name", ""))
    inner = _copy_const(w, bw, Out(src[0], src[1], dt, outer.shape, id(w)))
    if inner is None:
        return None
    return bw.one("Convert", "opset1", [inner], dict(el.find("data").attrib), dtype=outer.dtype,
                  shape=outer.shape, name=el.get("name", ""))


def _read_in_body(loop: Loop, v: Value) -> bool:
    return any(u is v for n in loop.body.nodes for u in n.reads()) or \
        any(u is v for u in [*loop.body_results(), *loop.body.outputs])


def _bind_special_params(bd: _Body, loop: Loop) -> None:
    """The ONNX condition parameter (true whenever the body runs) and the iteration number
    (Loop-5's ``current_iteration``, i64 unless the IR says i32), written only where the
    body reads it: OpenVINO 2026.4 fails to compile some loops with an unread
    ``current_iteration`` Parameter (``vector::_M_range_check``)."""
    bw = bd.bw
    if loop.condition_param is not None:
        bw.bind(loop.condition_param, bw.const(np.array(True)))
    it = loop.iteration_param
    if it is not None and _read_in_body(loop, it):
        dt = value_dtype(it) or I64
        if dt not in (I64, DataType.INT32):
            dt = I64
        shape = value_shape(it)
        shape = (1,) if shape is not None and len(shape) == 1 else ()
        param = bd.add_input(None, it.name or "iteration", dt, shape,
                             purpose="current_iteration")
        bw.bind(it, param)


def _output_ports(w: NetWriter, bd: _Body, loop: Loop, lengths: list[Out]):
    """The port_map outputs; returns the layer's output types, the post-processing of Concat
    outputs stacked on a new axis (``(j, fn)``) and the outputs to pad to their `lengths`
    (``(j, port, length)``)."""
    length_of = iter(lengths)
    out_specs = []
    posts = []
    pads = []
    n_in = len(bd.inputs) + bd.ext_offset
    for j, op in enumerate(loop.output_ports):
        ext = n_in + j
        if isinstance(op, Last):
            rid = bd.result(op.result)
            bd.out_entries.append({"external_port_id": ext, "internal_layer_id": rid})
            src = bd.bw.get(op.result)
            out_specs.append((value_dtype(op.output) or src.dtype,
                              value_shape(op.output) or src.shape))
            continue
        spec, post = _concat_output(w, bd, loop, j, op, ext)
        out_specs.append(spec)
        if post is not None:
            posts.append((j, post))
        if op.length is not None:
            pads.append((j, op, next(length_of)))
    return out_specs, posts, pads


def _changing_back_edges(bd: _Body) -> list[Carried]:
    """The back edges whose value may change shape between iterations, as far as the writer
    knows: all but those whose Parameter and Result have one static shape. (OpenVINO often
    knows static dimensions the writer does not: a decoder's cache entering as
    ``[2, 1, 4, 8, 16]`` when the model's input shapes are fixed.)"""
    return [c for c, _ in bd.back_edges
            if not _same_static_shape(bd.bw.get(c.param).shape, bd.bw.get(c.result).shape)]


def _known_to_change(bd: _Body, loop: Loop, changing: list[Carried]) -> bool:
    """Whether a back edge's value is known to change shape: its Result loses a static
    dimension of its Parameter, or the IR shows it grown (`growing_carried`). (A result of
    unknown shape is otherwise taken to keep it, as in the loops OpenVINO's converters write
    as TensorIterators.)"""
    grown = {c.param.uid for c in growing_carried(loop)}
    for c in changing:
        a, b = bd.bw.get(c.param).shape, bd.bw.get(c.result).shape
        if c.param.uid in grown or a is not None and b is not None and (len(a) != len(b) or any(
                isinstance(x, int) and x != y for x, y in zip(a, b, strict=True))):
            return True
    return False


def _same_static_shape(a, b) -> bool:
    return (a is not None and b is not None and len(a) == len(b)
            and all(isinstance(x, int) and x == y for x, y in zip(a, b, strict=True)))


def _widening_outputs(bd: _Body, changing: list[Carried], n_out: int) -> list:
    """An extra Loop output (read by nothing outside) for each changing back edge that is not
    an output already: OpenVINO's Loop shape inference gives the body Parameter the shape of
    the value entering the loop and widens it to the shapes the body returns only for back
    edges that are also Loop outputs. A cache grown by ``Concat`` and entering with a static
    shape would otherwise be compiled with its first length (OpenVINO's CPU plugin then
    computes silently wrong values or fails from the second iteration on). Returns the
    output types to append to the layer's. OpenVINO's TensorIterator never widens, so a
    loop with changing back edges is written as a Loop-5.

    OpenVINO's own limit remains on such an output: it sizes it by the interval its shape
    inference gives the body value (a cache and a piece of 2 joined: "at least 2 long"), and
    after zero iterations fails copying out a shorter initial value (as it does on the ONNX
    file through its own reader). No form was found that it both bounds correctly and
    compiles in a decoder loop."""
    as_output = {e["internal_layer_id"] for e in bd.out_entries}
    specs = []
    n_in = len(bd.inputs) + bd.ext_offset
    for c in changing:
        rid = bd.result(c.result)
        if rid in as_output:
            continue
        bd.out_entries.append({"external_port_id": n_in + n_out + len(specs),
                               "internal_layer_id": rid})
        as_output.add(rid)
        res = bd.bw.get(c.result)
        specs.append((res.dtype, res.shape))
    return specs


def _execution_condition(bd: _Body, loop: Loop) -> Out:
    """Loop-5's execution condition Result: the loop's condition (constant true without one),
    and with a precondition, the precondition of the next iteration; returns its source."""
    bw = bd.bw
    if loop.condition_result is not None:
        cond_src = bw.get(loop.condition_result)
    else:
        cond_src = bw.const(np.array(True))
    if loop.precondition is not None:
        nxt = _precondition_next(bw, loop)
        cond_src = nxt if loop.condition_result is None else bw.one(
            "LogicalAnd", "opset1", [cond_src, nxt], {"auto_broadcast": "numpy"}, dtype=BOOL)
    rid = bw.result(cond_src)
    bd.out_entries.append({"external_port_id": -1, "internal_layer_id": rid,
                           "purpose": "execution_condition"})
    return cond_src


def _carry_condition_inputs(bd: _Body, cond: Out) -> list[tuple[int, int]]:
    """Back edges (Result, Parameter) making every loop-invariant body Parameter that the
    execution condition reads carried, unchanged (`_pass_through`). OpenVINO's CPU plugin
    throws ``vector::_M_range_check`` compiling a Loop whose condition reads an invariant
    input it has folded into a constant (tf2onnx's ``i < n`` with `n` from a shape that
    fixed input shapes make static); a carried input is not folded."""
    feeds: dict[int, list[int]] = {}
    for src, _, dst, _ in bd.bw.edges:
        feeds.setdefault(dst, []).append(src)
    carried = {plid for _, plid in bd.back_edges}
    external = {e["internal_layer_id"] for e in bd.in_entries
                if e.get("external_port_id", -1) >= 0 and "axis" not in e}
    seen, todo, out = set(), [cond.layer], []
    while todo:
        lid = todo.pop()
        if lid in seen:
            continue
        seen.add(lid)
        if lid in external and lid not in carried:
            out.append((bd.bw.result(_pass_through(bd.bw, bd.param_layers[lid])), lid))
        todo.extend(feeds.get(lid, ()))
    return out


def _trip_count(w: NetWriter, bd: _Body, loop: Loop, trip: Out | None) -> Out:
    """Loop-5's trip count input: the loop's (`trip`, the port carrying it), -1 (unbounded)
    when absent, clamped at 0 for ONNX, and bounded by the slice count of sliced inputs."""
    if trip is None:
        trip = w.i64(-1)
    else:
        if loop.negative_trip_count == "zero":
            zero = w.const(np.array(0, dtype=_np_int(trip.dtype)))
            trip = w.one("Maximum", "opset1", [trip, zero], {"auto_broadcast": "numpy"},
                         dtype=trip.dtype, shape=trip.shape)
        trip = _int32_bounded(w, loop, trip)
    if bd.sliced:  # OpenVINO's Loop does not stop at the end of its sliced inputs
        trip = _bound_by_slices(w, trip, bd.sliced)
    return trip


INT32_MAX = 2**31 - 1


def _int32_bounded(w: NetWriter, loop: Loop, trip: Out) -> Out:
    """`trip`, with -1 (no count) for a count of 2**31 - 1 or more: OpenVINO's CPU plugin
    computes a larger count as a 32-bit number (2**63 - 1, how TorchScript and tf2onnx write
    "unbounded", runs no iteration) and sizes the outputs it stacks by the count (2**31 - 1
    steps of 12 bytes: 24 GiB). Exact for every loop that stops before 2**31 - 1 iterations.
    A count fed as a model input arrives truncated to 32 bits already."""
    c = loop.trip_count.const if loop.trip_count is not None else None
    if c is not None and np.asarray(c).size == 1:
        if int(np.asarray(c).reshape(-1)[0]) < INT32_MAX:
            return trip
        return w.const(np.array(-1, dtype=_np_int(trip.dtype)))
    npdt = _np_int(trip.dtype)
    big = w.one("GreaterEqual", "opset1", [trip, w.const(np.array(INT32_MAX, dtype=npdt))],
                {"auto_broadcast": "numpy"}, dtype=BOOL, shape=trip.shape)
    return w.one("Select", "opset1", [big, w.const(np.array(-1, dtype=npdt)), trip],
                 {"auto_broadcast": "numpy"}, dtype=trip.dtype, shape=trip.shape)


def _initial_condition(w: NetWriter, loop: Loop, cond: Out | None) -> Out:
    """Loop-5's execution condition input: the initial condition `cond` (true when absent),
    and with a precondition, the precondition on the initial values."""
    if cond is None:
        cond = w.const(np.array(True))
    if loop.precondition is not None:
        first = _precondition_first(w, loop)
        cond = first if loop.initial_condition is None else w.one(
            "LogicalAnd", "opset1", [cond, first], {"auto_broadcast": "numpy"}, dtype=BOOL)
    return cond


def _attach_body(el: ET.Element, bd: _Body, back: list[tuple[int, int]]) -> None:
    """Put ``<port_map>``, ``<back_edges>`` and ``<body>`` into the loop's layer element."""
    pm = ET.Element("port_map")
    for e in bd.in_entries:
        ET.SubElement(pm, "input", {k: str(v) for k, v in e.items()})
    for e in bd.out_entries:
        ET.SubElement(pm, "output", {k: str(v) for k, v in e.items()})
    be = ET.Element("back_edges")
    for rid, plid in back:
        ET.SubElement(be, "edge", {"from-layer": str(rid), "to-layer": str(plid)})
    el.insert(0, be)
    el.insert(0, pm)
    el.append(bd.bw.element("body"))


def _pad_output(w: NetWriter, loop: Loop, j: int, op: Concat, out: Out, length: Out) -> Out:
    """Output `j` zero-padded along its axis up to its concatenation `length`."""
    axis = op.axis
    if axis < 0:
        r = len(out.shape) if out.shape is not None else None
        if r is None:
            raise UnsupportedError(f"{where(loop)}: output {j} pads along a negative axis "
                                   "of unknown rank")
        axis += r
    return _pad_to_length(w, out, axis, length)


def _shape_parts(w: NetWriter, x: Out, lo: int, hi: int | None) -> Out:
    """``shape(x)[lo:hi]`` as an i64 vector port."""
    shape = w.one("ShapeOf", "opset3", [x], {"output_type": "i64"}, dtype=I64)
    stop = INT64_MAX if hi is None else hi
    return w.one("Slice", "opset8", [shape, w.i64([lo]), w.i64([stop]), w.i64([1])], dtype=I64)


def _reverse(w: NetWriter, x: Out, axis: int) -> Out:
    return w.one("Slice", "opset8", [x, w.i64([-1]), w.i64([-INT64_MAX - 1]), w.i64([-1]),
                                     w.i64([axis])], dtype=x.dtype, shape=x.shape)


def _sliced_input(w: NetWriter, bd: _Body, loop: Loop, i: int, p: Sliced, outer: Out,
                  name: str) -> None:
    bw = bd.bw
    if p.part_size != abs(p.stride):
        raise UnsupportedError(
            f"{where(loop)}: sliced input {i} takes pieces of {p.part_size} every "
            f"{abs(p.stride)}: OpenVINO only slices with part_size == |stride|")
    if not _full_range(p):
        outer = _pre_slice(w, loop, p, outer)
    shape = outer.shape
    axis = p.axis
    if shape is not None and axis < 0:
        axis += len(shape)
    if axis < 0:
        raise UnsupportedError(f"{where(loop)}: sliced input {i} has a negative axis and an "
                               "unknown rank")
    part = p.part_size
    pshape = None
    if shape is not None:
        pshape = tuple(part if k == axis else d for k, d in enumerate(shape))
    if bd.as_ti:  # TensorIterator slices both ways, in pieces of |stride|
        attrs = {"axis": axis, "start": 0 if p.stride > 0 else -1,
                 "end": -1 if p.stride > 0 else 0, "stride": p.stride, "part_size": part}
        param = bd.add_input(outer, name, outer.dtype, pshape, **attrs)
        piece = param
    else:  # Loop-5 slices forward one by one: split the axis into [count, part], reverse it
        x = outer
        if part > 1:
            if shape is not None and all(isinstance(d, int) for d in shape):
                pattern = w.i64(list(shape[:axis]) + [-1, part] + list(shape[axis + 1:]))
            else:
                pattern = w.one("Concat", "opset1", [_shape_parts(w, x, 0, axis),
                                                     w.i64([-1, part]),
                                                     _shape_parts(w, x, axis + 1, None)],
                                {"axis": 0}, dtype=I64)
            x = w.one("Reshape", "opset1", [x, pattern], {"special_zero": False},
                      dtype=x.dtype)
        if p.stride < 0:
            x = _reverse(w, x, axis)
        pshape1 = None if shape is None else tuple(
            (1 if k == axis else d) for k, d in enumerate(shape))
        if part > 1 and pshape1 is not None:
            pshape1 = pshape1[:axis + 1] + (part,) + pshape1[axis + 1:]
        attrs = {"axis": axis, "start": 0, "end": -1, "stride": 1, "part_size": 1}
        bd.sliced.append((x, axis))
        param = bd.add_input(x, name, outer.dtype, pshape1, **attrs)
        piece = param
        if part > 1:
            piece = bw.one("Squeeze", "opset1", [param, bw.i64([axis])], dtype=param.dtype,
                           shape=pshape)
    if p.keep_axis:
        bw.bind(p.param, piece)
    else:
        bw.bind(p.param, bw.one("Squeeze", "opset1", [piece, bw.i64([axis])],
                                dtype=piece.dtype))


def _concat_output(w: NetWriter, bd: _Body, loop: Loop, j: int, op, ext: int):
    """Port-map entry of a Concat output; returns (type spec, post-processing or None)."""
    bw = bd.bw
    src = bw.get(op.result)
    shape = src.shape if src.shape is not None else value_shape(op.result)
    axis = op.axis
    rank = None if shape is None else len(shape)
    if op.new_axis:
        if axis < 0:
            if rank is None:
                raise UnsupportedError(f"{where(loop)}: output {j} stacks on a negative axis "
                                       "of unknown rank")
            axis += rank + 1
        chunk = 1
    else:
        if rank is None or not -rank <= axis < rank:
            raise UnsupportedError(f"{where(loop)}: output {j} concatenates along axis {axis} "
                                   "of a body value of unknown rank")
        axis = axis + rank if axis < 0 else axis
        chunk = shape[axis] if isinstance(shape[axis], int) else None
    dt = value_dtype(op.output) or src.dtype
    if bd.as_ti and not op.reverse and (op.new_axis or chunk is not None):
        if op.new_axis:
            src = bw.one("Unsqueeze", "opset1", [src, bw.i64([axis])], dtype=src.dtype,
                         shape=None if shape is None else shape[:axis] + (1,) + shape[axis:])
        elif chunk < 1:
            raise UnsupportedError(f"{where(loop)}: output {j} concatenates empty pieces")
        rid = bd.result(op.result, out=src)
        bd.out_entries.append({"external_port_id": ext, "internal_layer_id": rid, "axis": axis,
                               "start": 0, "end": -1, "stride": chunk, "part_size": chunk})
        return (dt, value_shape(op.output) or _joined_shape(shape, axis, op.new_axis)), None
    # Loop-5, reversed outputs and pieces of unknown size: stack on a new axis, then reverse
    # and merge after the loop
    stacked = bw.one("Unsqueeze", "opset1", [src, bw.i64([axis])], dtype=src.dtype,
                     shape=None if shape is None else shape[:axis] + (1,) + shape[axis:])
    rid = bd.result(op.result, out=stacked)
    bd.out_entries.append({"external_port_id": ext, "internal_layer_id": rid, "axis": axis,
                           "start": 0, "end": -1, "stride": 1, "part_size": 1})

    def post(out: Out) -> Out:
        if op.reverse:
            out = _reverse(w, out, axis)
        if not op.new_axis:
            n = w.one("ReduceProd", "opset1", [_shape_parts(w, out, axis, axis + 2),
                                               w.i64([0])], {"keep_dims": True}, dtype=I64)
            pattern = w.one("Concat", "opset1", [_shape_parts(w, out, 0, axis), n,
                                                 _shape_parts(w, out, axis + 2, None)],
                            {"axis": 0}, dtype=I64)
            out = w.one("Reshape", "opset1", [out, pattern], {"special_zero": False},
                        dtype=out.dtype,
                        shape=value_shape(op.output) or _joined_shape(shape, axis, False))
        return out

    final = op.new_axis and not op.reverse  # the layer's output is the loop's output
    return (dt, (value_shape(op.output) if final else None)
            or _joined_shape(shape, axis, True)), post


def _joined_shape(piece, axis: int, new_axis: bool):
    """The shape of pieces of shape `piece` joined on `axis` (a new axis or an existing one):
    that axis of unknown length; None when the piece's shape is unknown."""
    if piece is None:
        return None
    piece = tuple(piece)
    if new_axis:
        return piece[:axis] + (None,) + piece[axis:]
    return piece[:axis] + (None,) + piece[axis + 1:]


def _precondition_params(loop: Loop) -> set[int]:
    """uids of the body parameters the precondition depends on."""
    body = loop.body
    params = {v.uid for v in body.inputs}
    producers = {v.uid: n for n in body.nodes for v in n.outputs}
    seen: set[int] = set()
    used: set[int] = set()
    stack = [loop.precondition]
    while stack:
        v = stack.pop()
        if v is None or v.uid in seen:
            continue
        seen.add(v.uid)
        if v.uid in params:
            used.add(v.uid)
        n = producers.get(v.uid)
        if n is not None:
            stack.extend(n.reads())
    return used


def _check_precondition(loop: Loop) -> None:
    used = _precondition_params(loop)
    for p in loop.sliced:
        if p.param.uid in used:
            raise UnsupportedError(
                f"{where(loop)}: its precondition (TensorRT while condition) reads the sliced "
                f"input '{p.param.name}'; OpenVINO checks conditions after each iteration, "
                "so only conditions on carried, invariant and outside values can be written")


def _precondition_first(w: NetWriter, loop: Loop) -> Out:
    """The precondition evaluated before the loop, on the initial values."""
    subst: dict[int, Out] = {}
    for p in loop.input_ports:
        if not isinstance(p, Sliced):
            subst[p.param.uid] = w.get(p.value, loop)
    it = loop.iteration_param
    if it is not None and _read_in_body(loop, it):
        dt = value_dtype(it) or I64
        shape = value_shape(it)
        subst[it.uid] = w.const(np.zeros(shape if shape is not None else (), _np_int(dt)))
    if loop.condition_param is not None:
        subst[loop.condition_param.uid] = w.const(np.array(True))
    return w.eval_cone(loop.body, loop.precondition, subst)


def _precondition_next(bw: NetWriter, loop: Loop) -> Out:
    """The precondition evaluated in the body on the values the next iteration will see."""
    subst: dict[int, Out] = {}
    for c in loop.carried:
        subst[c.param.uid] = bw.get(c.result, loop)
    it = loop.iteration_param
    if it is not None:
        cur = bw.get(it, loop)
        one = bw.const(np.ones(cur.shape if cur.shape is not None else (), _np_int(cur.dtype)))
        subst[it.uid] = bw.one("Add", "opset1", [cur, one], {"auto_broadcast": "numpy"},
                               dtype=cur.dtype, shape=cur.shape)
    return bw.eval_cone(loop.body, loop.precondition, subst)


def _bound_by_slices(w: NetWriter, trip: Out, sliced: list[tuple[Out, int]]) -> Out:
    """``count if trip < 0 else min(trip, count)``, count the fewest slices of any input."""
    count = None
    for x, axis in sliced:
        n = w.one("Gather", "opset8", [w.one("ShapeOf", "opset3", [x], {"output_type": "i64"},
                                             dtype=I64), w.i64(axis), w.i64(0)],
                  {"batch_dims": 0}, dtype=I64, shape=())
        count = n if count is None else w.one("Minimum", "opset1", [count, n],
                                              {"auto_broadcast": "numpy"}, dtype=I64, shape=())
    if trip.dtype != I64:
        trip = w.one("Convert", "opset1", [trip], {"destination_type": "i64"}, dtype=I64,
                     shape=trip.shape)
    if trip.shape != ():
        trip = w.one("Reshape", "opset1", [trip, w.i64([])], {"special_zero": False},
                     dtype=I64, shape=())
    low = w.one("Minimum", "opset1", [trip, count], {"auto_broadcast": "numpy"}, dtype=I64,
                shape=())
    negative = w.one("Less", "opset1", [trip, w.i64(0)], {"auto_broadcast": "numpy"},
                     dtype=BOOL, shape=())
    return w.one("Select", "opset1", [negative, count, low], {"auto_broadcast": "numpy"},
                 dtype=I64, shape=())


def _np_int(dt):
    return np.int32 if dt == DataType.INT32 else np.int64


def _pad_to_length(w: NetWriter, out: Out, axis: int, length: Out) -> Out:
    """Zero-pad `out` along `axis` up to `length` entries (TensorRT concatenation length)."""
    shape = w.one("ShapeOf", "opset3", [out], {"output_type": "i64"}, dtype=I64)
    have = w.one("Gather", "opset8", [shape, w.i64([axis]), w.i64(0)], {"batch_dims": 0},
                 dtype=I64)
    want = w.one("Reshape", "opset1", [w.one("Convert", "opset1", [length],
                                             {"destination_type": "i64"}, dtype=I64),
                                       w.i64([1])], {"special_zero": False}, dtype=I64)
    extra = w.one("Subtract", "opset1", [want, have], {"auto_broadcast": "numpy"}, dtype=I64)
    extra = w.one("Maximum", "opset1", [extra, w.i64([0])], {"auto_broadcast": "numpy"},
                  dtype=I64)
    r = len(out.shape) if out.shape is not None else None
    if r is not None:
        zeros = w.i64([0] * r)
        parts = ([w.i64([0] * axis)] if axis else []) + [extra] + \
            ([w.i64([0] * (r - axis - 1))] if axis + 1 < r else [])
        ends = parts[0] if len(parts) == 1 else w.one("Concat", "opset1", parts, {"axis": 0},
                                                      dtype=I64)
    else:
        rank = w.one("ShapeOf", "opset3", [shape], {"output_type": "i64"}, dtype=I64)
        zeros = w.one("Broadcast", "opset3", [w.i64(0), rank], {"mode": "numpy"}, dtype=I64)
        ends = w.one("ScatterUpdate", "opset3", [zeros, w.i64([axis]), extra, w.i64(0)],
                     dtype=I64)
    fill = w.const(np.zeros((), dtype=np.float32)) if out.dtype is None else \
        w.const(np.zeros((), dtype=to_numpy(out.dtype)))
    return w.one("Pad", "opset12", [out, zeros, ends, fill], {"pad_mode": "constant"},
                 dtype=out.dtype)


@exporter("If", since=1)
def _if(w: NetWriter, node: Node, ins):
    branches: list[Graph] = [node.attrs["then_branch"], node.attrs["else_branch"]]
    # captured constants are repeated in the branches, as for loop bodies: OpenVINO's CPU
    # plugin crashed compiling an If nested in an If that took a constant as an input
    caps = [v for v in node.captured() if v.const is None and
            not _const_layer(w, w.get(v, node))]
    outer = [w.get(v, node) for v in caps]
    consts = [v for v in node.captured() if v not in caps]
    elems = []
    out_specs = []
    ranks: list[list[int | None]] = []
    for bi, g in enumerate(branches):
        tag = "then" if bi == 0 else "else"
        bw = NetWriter(w.weights, parent=w, scope=f"{where(node)} {tag} branch: ")
        pm = ET.Element(f"{tag}_port_map")
        used = {v.uid for v in g.captures()}
        for v in consts:
            if v.uid in used and v.const is None:
                bw.env[v.uid] = _copy_const(w, bw, w.get(v, node))
        for k, (v, o) in enumerate(zip(caps, outer)):
            if v.uid not in used:
                continue
            p = bw.parameter(v.name or f"in_{k}", o.dtype, o.shape, f"{bw.scope}'{v.name}'")
            bw.env[v.uid] = p
            ET.SubElement(pm, "input", {"external_port_id": str(k + 1),
                                        "internal_layer_id": str(p.layer)})
        bw.write_nodes(g)
        if len(g.outputs) != len(node.outputs):
            raise UnsupportedError(f"{where(node)}: {tag} branch has {len(g.outputs)} outputs, "
                                   f"the node {len(node.outputs)}")
        ranks.append([])
        for j, v in enumerate(g.outputs):
            src = bw.get(v, node)
            ranks[-1].append(len(src.shape) if src.shape is not None
                             else w.inferred.ranks.get(v.uid) if w.inferred else None)
            rid = bw.result(src)
            ET.SubElement(pm, "output", {"external_port_id": str(len(caps) + 1 + j),
                                         "internal_layer_id": str(rid)})
            if bi == 0:
                out_specs.append((value_dtype(node.outputs[j]) or src.dtype, None))
        elems.append((pm, bw.element(f"{tag}_body")))
    if w.inferred is None or node.inputs[0].uid not in w.inferred.static_conditions:
        _check_branch_ranks(node, ranks)
    outs = w.layer("If", "opset8", [ins[0]] + outer, None, out_specs, name=node.name)
    el = w.layers[-1]
    for pm, body in elems:
        el.insert(0, pm)
        el.append(body)
    return outs



def _check_branch_ranks(node: Node, ranks: list[list[int | None]]) -> None:
    """Refuse an ``If`` whose branches return an output with different ranks: OpenVINO's
    If-8 output then has a dynamic rank, which its CPU plugin does not compile (ONNX Runtime
    runs it, each call taking one branch). Not called for an ``If`` on a condition known
    before the run (OpenVINO folds it to its branch: torch.onnx's ``squeeze`` of a dim that
    may be 1)."""
    for j, (a, b) in enumerate(zip(*ranks)):
        if a is not None and b is not None and a != b:
            name = node.outputs[j].name if j < len(node.outputs) else str(j)
            raise UnsupportedError(
                f"{where(node)}: output {j} ('{name}') has rank {a} in the then branch and "
                f"rank {b} in the else branch; OpenVINO's If needs one rank (its CPU plugin "
                "does not compile an If output of dynamic rank)")
