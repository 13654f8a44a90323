"""``org.openvinotoolkit`` ops written as standard ONNX, so that ONNX Runtime runs the copy.

- ``FakeQuantize`` is its arithmetic (`backends.common.fake_quantize`, the same order of
  operations, so ONNX Runtime computes what both itergraph backends compute)::

      q = Round((x - in_low) / (in_high - in_low) * (levels - 1))
      y = Where(x <= Min(in_low, in_high), out_low,
                Where(x > Max(in_low, in_high), out_high,
                      q / (levels - 1) * (out_high - out_low) + out_low))

  ``Round`` rounds half to even, as OpenVINO does (``nearbyint``).
- ``GatherTree`` is a ``Loop`` over the time steps, last first (`backends.common.gather_tree`):
  the carried ``parent`` ``[B, W]`` (int64, first ``0..W-1``) picks each step's ids and the
  next parents with ``GatherElements``; steps at or past a batch's ``max_seq_len`` give
  ``end_token`` and keep the parents. The stacked steps are reversed to time order, then every
  step after the first ``end_token`` becomes ``end_token`` (an exclusive ``CumSum`` of the
  matches). Parents and lengths are truncated to integers as OpenVINO does.

Other nodes of the domain go to `emit_node` unchanged.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ...ir.graph import Node
from .emit import Emitter
from .export_common import dtype_of, subgraph
from .naming import Env
from .node_export import emit_node
from .types import dtype_to_onnx


def _names(w, n: Node, env: Env) -> list[str]:
    user = f"{n.op_type} node '{n.name or '<unnamed>'}'"
    return [w.name(env, v, user) for v in n.inputs]


def emit_fake_quantize(w, n: Node, env: Env, nodes: list) -> None:
    """FakeQuantize as ``Sub``/``Div``/``Round``/``Where`` arithmetic (opset 12 or newer)."""
    if len(n.inputs) != 5 or any(v is None for v in n.inputs) or w.opset < 12:
        emit_node(w, n, env, nodes)
        return
    E = Emitter(nodes, w.namer, w.opset)
    x, il, ih, ol, oh = _names(w, n, env)
    steps = E.op("CastLike", [E.const(int(n.attrs["levels"]) - 1, "steps"), x], "steps") \
        if w.opset >= 15 else E.op("Cast", [E.const(int(n.attrs["levels"]) - 1, "steps")],
                                   "steps", to=_elem(n))
    scaled = E.op("Mul", [E.op("Div", [E.op("Sub", [x, il], "fq_shift"),
                                       E.op("Sub", [ih, il], "fq_in_range")], "fq_unit"),
                          steps], "fq_scaled")
    q = E.op("Round", [scaled], "fq_level")
    mid = E.op("Add", [E.op("Mul", [E.op("Div", [q, steps], "fq_frac"),
                                    E.op("Sub", [oh, ol], "fq_out_range")], "fq_out"), ol],
               "fq_mid")
    below = E.op("LessOrEqual", [x, E.op("Min", [il, ih], "fq_lo")], "fq_below")
    above = E.op("Greater", [x, E.op("Max", [il, ih], "fq_hi")], "fq_above")
    upper = E.op("Where", [above, oh, mid], "fq_upper")
    E.op("Where", [below, ol, upper], out=w.define(env, n.outputs[0]))


def _elem(n: Node) -> int:
    """The ONNX element type of `n`'s first input."""
    return dtype_to_onnx(dtype_of(n.inputs[0]))


def emit_gather_tree(w, n: Node, env: Env, nodes: list) -> None:
    """GatherTree as a ``Loop`` backwards over time (opset 13 or newer)."""
    if len(n.inputs) != 4 or any(v is None for v in n.inputs) or w.opset < 13:
        emit_node(w, n, env, nodes)
        return
    E = Emitter(nodes, w.namer, w.opset)
    steps, parents, lens, end = _names(w, n, env)
    end = E.op("Reshape", [end, E.const([], "scalar_shape")], "gt_end")
    shape = E.shape(steps)
    t_max = E.op("Gather", [shape, E.const(0, "axis0")], "gt_time", axis=0)
    batch_width = E.op("Slice", [shape, E.const([1]), E.const([3])], "gt_bw")
    width = E.op("Gather", [shape, E.const(2, "axis2")], "gt_width", axis=0)
    beams = E.op("Range", [E.const(0), width, E.const(1)], "gt_beams")
    parent0 = E.op("Expand", [beams, batch_width], "gt_parent0")
    length = E.op("Min", [E.op("Cast", [lens], "gt_len", to=TensorProto.INT64), t_max],
                  "gt_len_clip")

    bnodes: list = []
    B = Emitter(bnodes, w.namer, w.opset)
    it, cond, parent = w.fresh("gt_iter"), w.fresh("gt_cond"), w.fresh("gt_parent")
    t = B.op("Sub", [B.op("Sub", [t_max, B.const(1, "one")], "gt_last"), it], "gt_t")
    s_t = B.op("Gather", [steps, t], "gt_steps_t", axis=0)
    p_t = B.op("Gather", [parents, t], "gt_parents_t", axis=0)
    live = B.op("Unsqueeze", [B.op("Less", [t, length], "gt_live"), B.const([1], "axes")],
                "gt_live_col")
    ids = B.op("Where", [live, B.op("GatherElements", [s_t, parent], "gt_ids", axis=1), end],
               "gt_out_t")
    nxt = B.op("Cast", [B.op("GatherElements", [p_t, parent], "gt_next", axis=1)],
               "gt_next_i64", to=TensorProto.INT64)
    new_parent = B.op("Where", [live, nxt, parent], "gt_parent_next")
    cond_out = B.op("Identity", [cond], "gt_cond_out")
    elem = _elem(n)
    body = subgraph(w, "gather_tree_body", bnodes,
                    [helper.make_tensor_value_info(it, TensorProto.INT64, []),
                     helper.make_tensor_value_info(cond, TensorProto.BOOL, []),
                     helper.make_tensor_value_info(parent, TensorProto.INT64, [None, None])],
                    [helper.make_tensor_value_info(cond_out, TensorProto.BOOL, []),
                     helper.make_tensor_value_info(new_parent, TensorProto.INT64, [None, None]),
                     helper.make_tensor_value_info(ids, elem, [None, None])], [])
    true = E.const(True, "true", dtype=np.bool_)
    _, stacked = E.op("Loop", [t_max, true, parent0], "gt_loop", n_out=2, body=body)
    # ONNX Runtime stacks zero iterations as [0, B, 0]: the shape of step_ids restores W
    timed = E.reverse(E.op("Reshape", [stacked, shape], "gt_stacked"), 0)
    hit = E.op("Cast", [E.op("Equal", [timed, end], "gt_hit")], "gt_hit_i32",
               to=TensorProto.INT32)
    before = E.op("CumSum", [hit, E.const(0, "axis0")], "gt_hits_before", exclusive=1)
    after = E.op("Greater", [before, E.const(0, "zero", dtype=np.int32)], "gt_after_end")
    E.op("Where", [after, end, timed], out=w.define(env, n.outputs[0]))
