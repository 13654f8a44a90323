"""ONNX Runtime's ``com.microsoft.DynamicQuantizeLSTM``, backend-neutral (``xp``: numpy or
jax.numpy): an ONNX ``LSTM`` (opset 7 attributes, gates i, o, f, c, peepholes i, o, f) whose
two matrix products run on 8-bit integers, as ONNX Runtime's CPU kernel computes them.

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

The weights come in centered (``W - w_zp`` per direction, `zero_points`), in the float type
their products are exact in (`ms_quant.centered_weight`): a backend prepares constant weights
once. The time loop is the backend's (`run`'s `loop`).
"""

from __future__ import annotations

import numpy as np

from ...errors import ExecutionError, UnsupportedError, where
from ...semantics import ms_quant as mq
from .rnn import RnnAttrs, make_step

DOMAIN = mq.DOMAIN
QUANTIZED = np.dtype(np.uint8)  # the type X and h are quantized to (the products' `a`)


def lstm_attrs(node) -> RnnAttrs:
    """An ``LSTM``'s attributes (ONNX Runtime's kernel is its LSTM's, attributes and checks
    included; there is no ``layout``)."""
    return RnnAttrs.from_node(node, op="LSTM")


def dir_param(v, d: int):
    """Direction `d`'s scale (``[]`` or ``[4H]``) or zero point (its first entry)."""
    v = np.asarray(v)
    return v.reshape(v.shape[0], -1)[d]


def zero_points(zp, dirs: int) -> np.ndarray:
    """Each direction's zero point, shaped ``[dirs, 1, 1]`` to center a weight."""
    return np.stack([dir_param(zp, d)[0] for d in range(dirs)]).reshape(dirs, 1, 1)


def qproduct(xp, x, bc, ws):
    """``float((q(x) - zx) @ bc) * (sx * ws)`` with `x` dynamically quantized and `bc` a
    centered weight."""
    qx, sx, zx = mq.dynamic_quantize(xp, x)
    acc = mq.int_matmul(xp, qx, zx, None, None, bc=bc)
    return mq.scaled(xp, acc, sx * ws.astype(np.float32), None)


def check(node, at: RnnAttrs, x, w, r, seq_lens, w_scale, w_zp, r_scale, r_zp) -> int:
    """The hidden size, after checking the inputs' shapes (ExecutionError, UnsupportedError)."""
    if w_scale is None or w_zp is None or r_scale is None or r_zp is None:
        raise ExecutionError(f"{where(node)}: W_scale, W_zero_point, R_scale and "
                             "R_zero_point are required")
    H = at.hidden_size or int(r.shape[1])
    if w.shape[0] != at.dirs or w.shape[2] != 4 * H or tuple(r.shape[1:]) != (H, 4 * H):
        raise ExecutionError(f"{where(node)}: W {tuple(w.shape)} / R {tuple(r.shape)} do not "
                             f"match {at.dirs} direction(s) of hidden size {H}")
    if seq_lens is not None and (np.asarray(seq_lens) != x.shape[0]).any():
        raise UnsupportedError(f"{where(node)}: sequence_lens shorter than the sequence "
                               "are not supported")
    return H


def run(xp, at: RnnAttrs, loop, H: int, x, wc, rc, b, h0, c0, p, w_scale, r_scale):
    """The node's outputs ``(Y [seq, dirs, batch, H], Y_h, Y_c)`` from centered weights `wc`,
    `rc`. ``loop(step, xw, h, c) -> (y, h, c)`` runs `step` over the time steps of ``xw``
    ``[seq, batch, 4H]``, stacking the hidden states into ``y``."""
    seq, batch = x.shape[0], x.shape[1]
    ys, hs, cs = [], [], []
    for d in range(at.dirs):
        ws, rs = dir_param(w_scale, d), dir_param(r_scale, d)
        xd = x[::-1] if at.reverse(d) else x
        xw = qproduct(xp, xd.reshape(seq * batch, -1), wc[d], ws).reshape(seq, batch, 4 * H)
        bias = None if b is None else (b[d, :4 * H] + b[d, 4 * H:]).astype(np.float32)
        acts = [a.build(xp) for a in at.activations[d]]
        step = make_step(at, xp, acts, [lambda h, rd=rc[d], rs=rs: qproduct(xp, h, rd, rs)],
                         bias, None if p is None else p[d].astype(np.float32), H)
        h = xp.zeros((batch, H), np.float32) if h0 is None else h0[d].astype(np.float32)
        c = xp.zeros((batch, H), np.float32) if c0 is None else c0[d].astype(np.float32)
        y, h, c = loop(step, xw, h, c)
        ys.append(y[::-1] if at.reverse(d) else y)
        hs.append(h)
        cs.append(c)
    return xp.stack(ys, axis=1), xp.stack(hs), xp.stack(cs)
