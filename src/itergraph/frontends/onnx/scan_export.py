"""Writing a canonical `Loop` as an ONNX ``Scan`` (opset 9+) when its form allows.

The form: no trip count, no conditions, no precondition, no iteration parameter; every sliced
input drops a full-range axis one element at a time (``keep_axis=False``, ``part_size`` 1,
stride ±1, start/end 0 and -1); every output is ``Last`` of a carried result or
``Concat(new_axis=True)`` without ``length``; the ranks of the body results are known (ONNX
Runtime's Scan needs their shapes); and, with several sliced inputs, their lengths are equal
(known statically, or required by ``equal_slices`` as a Scan requires them, or the loop is
the time loop of an ONNX Scan-8). Invariant inputs become outer-scope captures.
"""

from __future__ import annotations

from onnx import helper

from ...errors import where
from ...ir.loop import Concat, Last, Loop
from .emit import Emitter
from .export_common import (
    bind_invariants,
    copy_last,
    dim_of,
    emit_body,
    final_names,
    rank_of,
    subgraph,
    value_info,
)
from .naming import Env


def scan_form(loop: Loop) -> bool:
    """Whether `loop` can be written as an ONNX Scan (see the module docstring)."""
    if any(x is not None for x in (loop.trip_count, loop.initial_condition, loop.condition_result,
                                   loop.condition_param, loop.precondition,
                                   loop.iteration_param)):
        return False
    sliced = loop.sliced
    if not sliced:
        return False
    for s in sliced:
        if s.keep_axis or s.part_size != 1 or abs(s.stride) != 1 or {s.start, s.end} != {0, -1}:
            return False
    for o in loop.output_ports:
        if isinstance(o, Last) and loop.carried_for_result(o.result) is None:
            return False
        if isinstance(o, Concat) and (not o.new_axis or o.length is not None):
            return False
    results = [c.result for c in loop.carried]
    results += [o.result for o in loop.output_ports if isinstance(o, Concat)]
    if any(rank_of(r) is None for r in results):
        return False  # ONNX Runtime's Scan wants the shapes of its body outputs
    # a Scan refuses unequal lengths, as a loop with equal_slices does; a Scan-8 time loop
    # (read from a Scan, without equal_slices since its rows may be empty) slices rows of
    # one time length
    if len(sliced) > 1 and not loop.equal_slices and loop.origin != "onnx.Scan":
        lens = {dim_of(s.value, s.axis) for s in sliced}
        if len(lens) != 1 or None in lens:
            return False
    return True


def emit_scan(w, loop: Loop, env, nodes) -> None:
    E = Emitter(nodes, w.namer, w.opset)
    lname = where(loop)
    benv = Env(env)
    carried, sliced = loop.carried, loop.sliced
    b_inputs = [value_info(w.define(benv, c.param), c.param.type or c.value.type, shape=False)
                for c in carried]
    b_inputs += [value_info(w.define(benv, s.param), s.param.type, shape=False) for s in sliced]
    bind_invariants(w, loop, env, benv)
    bnodes: list = []
    inits = emit_body(w, loop.body, benv, bnodes)
    concats = [o for o in loop.output_ports if isinstance(o, Concat)]
    outs = [(w.name(benv, c.result, lname), c.result.type, c.result.name) for c in carried]
    outs += [(w.name(benv, o.result, lname), o.result.type, o.result.name) for o in concats]
    b_outputs = w.outputs(bnodes, inits, outs)
    body = subgraph(w, f"{loop.name or 'scan'}_body", bnodes, b_inputs, b_outputs, inits)
    finals, rest = final_names(w, loop, env, nodes, E)
    scan_outs = [w.define(env, o.output) for o in concats]
    ins = [w.name(env, c.value, lname) for c in carried] + [w.name(env, s.value, lname)
                                                             for s in sliced]
    attrs = dict(body=body, num_scan_inputs=len(sliced),
                 scan_input_axes=[s.axis for s in sliced],
                 scan_input_directions=[1 if s.stride < 0 else 0 for s in sliced])
    if concats:
        attrs.update(scan_output_axes=[o.axis for o in concats],
                     scan_output_directions=[1 if o.reverse else 0 for o in concats])
    nodes.append(helper.make_node("Scan", ins, finals + scan_outs,
                                  name=w.node_names.fresh(loop.name or "Scan"), **attrs))
    left = copy_last(w, loop, env, E, finals, rest)
    assert not left  # scan_form admits only Last of carried results
