"""ONNX ``LSTM``, ``GRU`` and ``RNN`` as standard nodes, for writers whose recurrent ops lack a
feature (OpenVINO's sequences have no peepholes, and its CPU plugin ignores their lengths on
shapes known only at run time): per direction ``X @ W^T`` over all steps, then a ``Scan``
over the steps whose body adds ``h @ R^T`` and the biases and runs the gates (LSTM:
`contrib_expand.lstm_body`, the body ``DynamicQuantizeLSTM``'s expansion uses, with the
peepholes; GRU: `_gru_body`, gates z, r, h, ``linear_before_reset`` either way; RNN:
`_rnn_body`).

Activations Sigmoid, Tanh and Relu by any case, ``clip``, ``input_forget``, ``layout`` and
``sequence_lens`` are written: with lengths, a ``[seq, batch]`` mask (step < length) is
scanned beside the steps, and a row past its length keeps its state and outputs zeros; the
reverse direction scans the reversed steps and mask, so each row starts at its own last step
(ONNX Runtime).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from ...ir.graph import Graph, Node
from ...semantics.recurrent import ACTIVATION_OPS, activation_names
from .contrib_expand import (
    _attr,
    _Builder,
    _reverse,
    hidden_and_direction,
    lstm_body,
    masked_step,
    standard_activations,
)


def lstm_expansion(node: Node) -> Graph:
    """`node` (ONNX LSTM) as a graph of standard nodes: inputs the node's present inputs,
    outputs its outputs."""
    b = _Builder(node)
    _lstm(b, node)
    return b.graph()


def _names(node: Node, dirs: int) -> list[str]:
    return standard_activations(node, activation_names(_attr(node, "activations"),
                                                       node.op_type, dirs))


def _i64(b: _Builder, *v: int) -> str:
    return b.init(np.array(v, np.int64))


def _time_major(b: _Builder, node: Node, H: int) -> tuple[int, str, str, str, str | None]:
    """``layout`` (1: batch-major), the input time-major, its shape, the state shape
    ``[batch, H]`` and the mask of valid steps (None without ``sequence_lens``)."""
    layout = int(_attr(node, "layout", 0))
    x = b.op("Transpose", [b.input(0)], perm=[1, 0, 2]) if layout else b.input(0)
    xs = b.op("Shape", [x])
    batch = b.op("Slice", [xs, _i64(b, 1), _i64(b, 2)])
    state_shape = b.op("Concat", [batch, _i64(b, H)], axis=0)
    return layout, x, xs, state_shape, _step_mask(b, xs) if b.input(4) is not None else None


def _lstm(b: _Builder, node: Node) -> None:
    H, direction, dirs = hidden_and_direction(node)
    names = _names(node, dirs)
    layout, x, xs, state_shape, mask = _time_major(b, node, H)
    ys, hs, cs = [], [], []
    for di in range(dirs):
        d = b.init(np.int64(di))
        reverse = direction == "reverse" or di == 1
        xd = _reverse(b, x) if reverse else x
        wt = b.op("Transpose", [b.op("Gather", [b.input(1), d], axis=0)], perm=[1, 0])
        rt = b.op("Transpose", [b.op("Gather", [b.input(2), d], axis=0)], perm=[1, 0])
        xw = b.op("MatMul", [xd, wt])  # [seq, batch, 4H]
        bias = None
        if b.input(3):
            bd = b.op("Gather", [b.input(3), d], axis=0)
            bias = b.op("Add", [b.op("Slice", [bd, _i64(b, 0), _i64(b, 4 * H)]),
                                b.op("Slice", [bd, _i64(b, 4 * H), _i64(b, 8 * H)])])
        init = []
        for i in (5, 6):
            s0 = b.input(i)
            if s0 is not None and layout:
                s0 = b.op("Transpose", [s0], perm=[1, 0, 2])
            init.append(b.op("Gather", [s0, d], axis=0) if s0 else
                        b.op("ConstantOfShape", [state_shape],
                             value=helper.make_tensor("z", TensorProto.FLOAT, [1], [0.0])))
        peep = b.op("Gather", [b.input(7), d], axis=0) if b.input(7) else None
        body = lstm_body(b, lambda s, h, rt=rt: s.op("MatMul", [h, rt]), bias, peep, H,
                         names[3 * di:3 * di + 3], _attr(node, "clip"),
                         bool(_attr(node, "input_forget", 0)), masked=mask is not None)
        scanned = [xw] if mask is None else [xw, _reverse(b, mask) if reverse else mask]
        hn, cn, y = b.fresh(), b.fresh(), b.fresh()
        b.nodes.append(helper.make_node("Scan", [*init, *scanned], [hn, cn, y], body=body,
                                        num_scan_inputs=len(scanned)))
        ys.append(_reverse(b, y) if reverse else y)
        hs.append(hn)
        cs.append(cn)
    _outputs(b, node, ys, hs, cs, layout)


def _step_mask(b: _Builder, xs: str) -> str:
    """``[seq, batch]`` bool: step t < the row's ``sequence_lens``."""
    seq = b.op("Squeeze", [b.op("Slice", [xs, _i64(b, 0), _i64(b, 1)]), _i64(b, 0)])
    steps = b.op("Range", [b.init(np.int64(0)), seq, b.init(np.int64(1))])
    lens = b.op("Cast", [b.input(4)], to=TensorProto.INT64)
    return b.op("Less", [b.op("Unsqueeze", [steps, _i64(b, 1)]),
                         b.op("Unsqueeze", [lens, _i64(b, 0)])])


def _outputs(b: _Builder, node: Node, ys, hs, cs, layout: int) -> None:
    zero, one = _i64(b, 0), _i64(b, 1)
    outs = [[b.op("Unsqueeze", [y, one]) for y in ys],
            [b.op("Unsqueeze", [h, zero]) for h in hs],
            [b.op("Unsqueeze", [c, zero]) for c in cs]]
    perms = ([2, 0, 1, 3], [1, 0, 2], [1, 0, 2])
    for k in range(len(node.outputs)):
        if node.outputs[k] is None:
            continue
        if not layout:
            b.op("Concat", outs[k], out=k, axis=1 if k == 0 else 0)
            continue
        joined = b.op("Concat", outs[k], axis=1 if k == 0 else 0)
        b.op("Transpose", [joined], out=k, perm=perms[k])


def gru_expansion(node: Node) -> Graph:
    """`node` (ONNX GRU or RNN) as a graph of standard nodes: inputs the node's present
    inputs, outputs its outputs."""
    b = _Builder(node)
    _gru(b, node)
    return b.graph()


def _gru(b: _Builder, node: Node) -> None:
    H, direction, dirs = hidden_and_direction(node)
    gates = 3 if node.op_type == "GRU" else 1
    names = _names(node, dirs)
    layout, x, xs, state_shape, mask = _time_major(b, node, H)
    ys, hs = [], []
    for di in range(dirs):
        d = b.init(np.int64(di))
        reverse = direction == "reverse" or di == 1
        xd = _reverse(b, x) if reverse else x
        wt = b.op("Transpose", [b.op("Gather", [b.input(1), d], axis=0)], perm=[1, 0])
        rd = b.op("Gather", [b.input(2), d], axis=0)  # [gates*H, H]
        r_zr = b.op("Transpose", [b.op("Slice", [rd, _i64(b, 0), _i64(b, (gates - 1) * H)])],
                    perm=[1, 0])
        r_h = b.op("Transpose", [b.op("Slice", [rd, _i64(b, (gates - 1) * H),
                                                _i64(b, gates * H)])], perm=[1, 0])
        xw = b.op("MatMul", [xd, wt])  # [seq, batch, gates*H]
        rb = None
        if b.input(3):
            bd = b.op("Gather", [b.input(3), d], axis=0)
            xw = b.op("Add", [xw, b.op("Slice", [bd, _i64(b, 0), _i64(b, gates * H)])])
            rb = b.op("Slice", [bd, _i64(b, gates * H), _i64(b, 2 * gates * H)])
        s0 = b.input(5)
        if s0 is not None and layout:
            s0 = b.op("Transpose", [s0], perm=[1, 0, 2])
        init = b.op("Gather", [s0, d], axis=0) if s0 else b.op(
            "ConstantOfShape", [state_shape],
            value=helper.make_tensor("z", TensorProto.FLOAT, [1], [0.0]))
        acts = names[len(names) // dirs * di:len(names) // dirs * (di + 1)]
        body = _gru_body(b, node, r_zr, r_h, rb, H, acts, mask is not None) if gates == 3 \
            else _rnn_body(b, node, r_h, rb, acts, mask is not None)
        scanned = [xw] if mask is None else [xw, _reverse(b, mask) if reverse else mask]
        hn, y = b.fresh(), b.fresh()
        b.nodes.append(helper.make_node("Scan", [init, *scanned], [hn, y], body=body,
                                        num_scan_inputs=len(scanned)))
        ys.append(_reverse(b, y) if reverse else y)
        hs.append(hn)
    _outputs(b, node, ys, hs, [], layout)


def _rnn_body(b: _Builder, node: Node, r_t: str, rb, acts: list[str],
              masked: bool) -> onnx.GraphProto:
    """The Scan body of one RNN direction: ``(h, xw_t[, m_t]) -> (h', y)``,
    ``h' = f(xw_t + h R^T + Rb)``."""
    s = b.sub()
    h, xw_t = s.fresh(), s.fresh()
    v = s.op("Add", [xw_t, s.op("MatMul", [h, r_t])])
    v = s.op("Add", [v, rb]) if rb else v
    clip = _attr(node, "clip")
    if clip is not None:
        v = s.op("Clip", [v, s.init(np.float32(-clip)), s.init(np.float32(clip))])
    return _step_graph(s, "rnn_step", h, xw_t, s.op(ACTIVATION_OPS[acts[0]], [v]), masked)


def _step_graph(s: _Builder, name: str, h: str, xw_t: str, h2: str,
                masked: bool) -> onnx.GraphProto:
    """A one-state step body ``(h, xw_t[, m_t]) -> (h2, y)``: with a mask, a row not taking
    the step keeps `h` and outputs zeros."""
    y = s.op("Identity", [h2])
    ins = [helper.make_tensor_value_info(h, TensorProto.FLOAT, None),
           helper.make_tensor_value_info(xw_t, TensorProto.FLOAT, None)]
    if masked:
        m, y = masked_step(s, ins, h2)
        h2 = s.op("Where", [m, h2, h])
    outs = [helper.make_tensor_value_info(h2, TensorProto.FLOAT, None),
            helper.make_tensor_value_info(y, TensorProto.FLOAT, None)]
    return helper.make_graph(s.nodes, name, ins, outs)


def _gru_body(b: _Builder, node: Node, r_zr: str, r_h: str, rb, H: int, acts: list[str],
              masked: bool) -> onnx.GraphProto:
    """The Scan body of one GRU direction: ``(h, xw_t[, m_t]) -> (h', y)``; `xw_t` holds
    ``x W^T + Wb`` for gates z, r, h."""
    s = b.sub()
    h, xw_t = s.fresh(), s.fresh()
    clip = _attr(node, "clip")

    def act(k: int, v: str) -> str:
        if clip is not None:
            v = s.op("Clip", [v, s.init(np.float32(-clip)), s.init(np.float32(clip))])
        return s.op(ACTIVATION_OPS[acts[k]], [v])

    xz, xr, xh = (s.fresh() for _ in range(3))
    s.nodes.append(helper.make_node("Split", [xw_t], [xz, xr, xh], axis=1, num_outputs=3))
    hzr = s.op("MatMul", [h, r_zr])
    rb_h = None
    if rb:
        rb_zr, rb_h = s.fresh(), s.fresh()
        s.nodes.append(helper.make_node("Split", [rb, s.init(np.array([2 * H, H], np.int64))],
                                        [rb_zr, rb_h], axis=0))
        hzr = s.op("Add", [hzr, rb_zr])
    hz, hr = s.fresh(), s.fresh()
    s.nodes.append(helper.make_node("Split", [hzr], [hz, hr], axis=1, num_outputs=2))
    z = act(0, s.op("Add", [xz, hz]))
    r = act(0, s.op("Add", [xr, hr]))
    if _attr(node, "linear_before_reset", 0):
        hh = s.op("MatMul", [h, r_h])
        hh = s.op("Mul", [r, s.op("Add", [hh, rb_h]) if rb_h else hh])
    else:
        hh = s.op("MatMul", [s.op("Mul", [r, h]), r_h])
        hh = s.op("Add", [hh, rb_h]) if rb_h else hh
    hh = act(1, s.op("Add", [xh, hh]))
    h2 = s.op("Add", [s.op("Mul", [s.op("Sub", [s.init(np.float32(1)), z]), hh]),
                      s.op("Mul", [z, h])])
    return _step_graph(s, "gru_step", h, xw_t, h2, masked)
