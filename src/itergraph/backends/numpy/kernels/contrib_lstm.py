"""NumPy kernel of ONNX Runtime's ``com.microsoft.DynamicQuantizeLSTM``: an ONNX ``LSTM``
(opset 7 attributes, gates i, o, f, c, peepholes i, o, f) whose two matrix products run on
8-bit integers, as ONNX Runtime's CPU kernel computes them.

Inputs: ``X [seq, batch, input]``, ``W [dirs, input, 4H]`` and ``R [dirs, H, 4H]`` (uint8 or
int8, *transposed* against ``LSTM``'s), ``B``, ``sequence_lens``, ``initial_h``,
``initial_c``, ``P``, then ``W_scale``, ``W_zero_point``, ``R_scale``, ``R_zero_point``
(``[dirs]`` per tensor, ``[dirs, 4H]`` per output column; a direction's zero point is its
first entry, as ONNX Runtime reads it). Per direction::

    qx, sx, zx = dynamic_quantize(X)                 # over all of X at once
    xw = float((qx - zx) @ (W - w_zp)) * (sx * W_scale)
    for t:                                           # h: [batch, H]
        qh, sh, zh = dynamic_quantize(h)             # over the whole batch at each step
        gates = xw[t] + float((qh - zh) @ (R - r_zp)) * (sh * R_scale)
        gates += Wb + Rb;  then LSTM's gate math (clip, activations, peepholes)

with ``dynamic_quantize`` `ms_quant`'s (uint8, the integer sums exact in int32). ONNX Runtime
quantizes the hidden state of each chunk of batch rows its thread pool hands out: with one
thread, or a batch of one, the whole batch as here. Its sigmoid and tanh are MLAS
polynomials; a hidden value within an ulp of a quantization tie may then round to the
neighbouring code, which moves later steps by about one quantization step of ``R``'s
product. ``sequence_lens`` shorter than the sequence are refused.

The usual cell (sigmoid, tanh, tanh, no peepholes) runs the same operations in place
(`contrib_lstm_steps`) where the recurrent product is exact in float32; any other cell runs
the shared step of `backends.common.rnn`.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, UnsupportedError, where
from ....ir.attributes import attr, attr_str, const_input
from ....semantics import exact_int
from ....semantics import ms_quant as mq
from ...common.rnn import KINDS, RnnAttrs, _parse_activations, make_step
from . import contrib_lstm_steps as steps
from . import kernel

DOMAIN = mq.DOMAIN


def lstm_attrs(node) -> RnnAttrs:
    direction = attr_str(node, "direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise UnsupportedError(f"{where(node)}: unknown direction {direction!r}")
    dirs = 2 if direction == "bidirectional" else 1
    hidden = attr(node, "hidden_size")
    clip = attr(node, "clip")
    return RnnAttrs(op="LSTM", kind=KINDS["LSTM"], direction=direction, layout=0,
                    hidden_size=int(hidden) if hidden is not None else None,
                    clip=float(clip) if clip is not None else None,
                    activations=_parse_activations(node, KINDS["LSTM"], dirs),
                    input_forget=bool(attr(node, "input_forget", 0)),
                    linear_before_reset=False)


def _dir_param(v, d: int):
    """Direction `d`'s scale (``[]`` or ``[4H]``) or zero point (its first entry)."""
    v = np.asarray(v)
    return v.reshape(v.shape[0], -1)[d]


def qproduct(xp, x, w, ws, wzp, memo=None):
    """``float((q(x) - zx) @ (w - wzp)) * (sx * ws)`` with `x` dynamically quantized."""
    qx, sx, zx = mq.dynamic_quantize(xp, x)
    acc = mq.int_matmul(xp, qx, zx, w, wzp, memo)
    return mq.scaled(xp, acc, sx * ws.astype(np.float32), None)


@kernel("DynamicQuantizeLSTM", domain=DOMAIN)
def _dynamic_quantize_lstm(node, ctx):
    at = lstm_attrs(node)
    n_out = len(node.outputs)
    w_const, r_const = const_input(node, 1), const_input(node, 2)
    memos = [(mq.Memo(None if w_const is None else w_const[d]),
              mq.Memo(None if r_const is None else r_const[d])) for d in range(at.dirs)]

    def fn(x, w, r, b=None, seq_lens=None, h0=None, c0=None, p=None,
           w_scale=None, w_zp=None, r_scale=None, r_zp=None):
        if w_scale is None or w_zp is None or r_scale is None or r_zp is None:
            raise ExecutionError(f"{where(node)}: W_scale, W_zero_point, R_scale and "
                                 "R_zero_point are required")
        seq, batch = x.shape[0], x.shape[1]
        H = at.hidden_size or int(r.shape[1])
        if w.shape[0] != at.dirs or w.shape[2] != 4 * H or r.shape[1:] != (H, 4 * H):
            raise ExecutionError(f"{where(node)}: W {w.shape} / R {r.shape} do not match "
                                 f"{at.dirs} direction(s) of hidden size {H}")
        if seq_lens is not None and (np.asarray(seq_lens) != seq).any():
            raise UnsupportedError(f"{where(node)}: sequence_lens shorter than the sequence "
                                   "are not supported")
        ys, hs, cs = [], [], []
        for d in range(at.dirs):
            wzp = _dir_param(w_zp, d)[0]
            rzp = _dir_param(r_zp, d)[0]
            ws, rs = _dir_param(w_scale, d), _dir_param(r_scale, d)
            rd = memos[d][1].const if r is r_const else r[d]
            xd = x[::-1] if at.reverse(d) else x
            mw, mr = memos[d]
            wd = mw.const if w is w_const else w[d]
            xw = qproduct(np, xd.reshape(seq * batch, -1), wd, ws, wzp, mw)
            xw = xw.reshape(seq, batch, 4 * H)
            bias = None if b is None else (b[d, :4 * H] + b[d, 4 * H:]).astype(np.float32)
            h = np.zeros((batch, H), np.float32) if h0 is None else h0[d].astype(np.float32)
            c = np.zeros((batch, H), np.float32) if c0 is None else c0[d].astype(np.float32)
            pd = None if p is None else p[d].astype(np.float32)
            r_op = mr.operand(rd, rzp, (0,))
            if steps.standard_cell(at, d, pd) and exact_int.float32_exact(255, r_op):
                y, h, c = steps.run(xw, r_op.f32, rs, bias, h, c, at.clip)
            else:
                y, h, c = _generic(at, d, xw, rd, rs, rzp, mr, bias, pd, h, c)
            ys.append(y[::-1] if at.reverse(d) else y)
            hs.append(h)
            cs.append(c)
        outs = (np.ascontiguousarray(np.stack(ys, axis=1)), np.stack(hs), np.stack(cs))
        return outs[0] if n_out == 1 else outs[:n_out]

    return fn


def _generic(at, d, xw, rd, rs, rzp, mr, bias, peep, h, c):
    """Any cell: the shared step of `backends.common.rnn`, the recurrent product by
    `qproduct`."""
    acts = [a.build(np) for a in at.activations[d]]
    step = make_step(at, np, acts, [lambda v: qproduct(np, v, rd, rs, rzp, mr)], bias, peep,
                     h.shape[1])
    y = np.empty((xw.shape[0], *h.shape), np.float32)
    for t in range(xw.shape[0]):
        h, c = step(xw[t], [h, c])
        h, c = h.astype(np.float32), c.astype(np.float32)
        y[t] = h
    return y, h, c
