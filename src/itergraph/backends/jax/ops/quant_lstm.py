"""JAX lowering of ONNX Runtime's ``com.microsoft.DynamicQuantizeLSTM``: the arithmetic of
`backends.common.quant_lstm` (that of the NumPy kernel), the time loop a ``lax.scan``. Its
scales and zero points must be known at compile time; constant weights are centered once,
on the host (`OpContext.prepared`).

A bidirectional node whose directions share their activations runs both directions in one
``lax.scan`` (`_both_directions`): each step is the one-direction step mapped over the
directions (``jax.vmap``: the hidden state quantized per direction, the two products one
batched product), so XLA runs half the iterations, each no longer than one of the two
loops' (ddddocr's CRNN: two loops of 20 steps of a ``[1,512] x [512,2048]`` product)."""

from __future__ import annotations

import numpy as np

from ....semantics import ms_quant as mq
from ...common import quant_lstm as ql
from ...common.rnn import make_step
from ..table import lowering


def _loop(step, xw, h, c):
    from jax import lax

    def body(carry, xw_t):
        h, c = step(xw_t, list(carry))
        h, c = h.astype(np.float32), c.astype(np.float32)
        return (h, c), h

    (h, c), y = lax.scan(body, (h, c), xw)
    return y, h, c


def _centered(cx, w, zp):
    """``w - zp`` per direction (`zp`: ``[dirs, 1, 1]``), exact for uint8 codes: for a
    constant, one array per direction made on the host (XLA would copy a slice of one
    argument in every call)."""
    tag = ("lstm-centered", zp.dtype.str, zp.tobytes())
    split = [cx.prepared(w, (*tag, d), lambda v, d=d: np.ascontiguousarray(
        mq.centered_weight(v, zp, ql.QUANTIZED, (-2,))[d])) for d in range(w.shape[0])]
    return split if all(s is not None for s in split) else mq.centered(cx.xp, w, zp)


def _centered_stack(cx, w, zp):
    """``w - zp`` for every direction at once (`_both_directions` multiplies by all of them
    in each step): one array made on the host for a constant."""
    tag = ("lstm-centered-all", zp.dtype.str, zp.tobytes())
    wc = cx.prepared(w, tag, lambda v: np.ascontiguousarray(
        mq.centered_weight(v, zp, ql.QUANTIZED, (-2,))))
    return mq.centered(cx.xp, w, zp) if wc is None else wc


@lowering("DynamicQuantizeLSTM", domain=ql.DOMAIN)
def _dynamic_quantize_lstm(cx, x, w, r, b=None, seq_lens=None, h0=None, c0=None, p=None,
                           w_scale=None, w_zp=None, r_scale=None, r_zp=None):
    at = ql.lstm_attrs(cx.node)
    params = [None if v is None else cx.const(v, "the scales and zero points")
              for v in (w_scale, w_zp, r_scale, r_zp)]
    if seq_lens is not None:
        seq_lens = cx.const(seq_lens, "sequence_lens")
    H = ql.check(cx.node, at, x, w, r, seq_lens, *params)
    w_scale, w_zp, r_scale, r_zp = params
    both = at.dirs == 2 and len(set(at.activations)) == 1
    wc = _centered(cx, w, ql.zero_points(w_zp, at.dirs))
    rc = (_centered_stack if both else _centered)(cx, r, ql.zero_points(r_zp, at.dirs))
    run = _both_directions if both else ql.run
    outs = run(cx.xp, at, _loop, H, x, wc, rc, b, h0, c0, p, w_scale, r_scale)
    return outs[0] if len(cx.node.outputs) == 1 else outs[:len(cx.node.outputs)]


def _both_directions(xp, at, loop, H: int, x, wc, rc, b, h0, c0, p, w_scale, r_scale):
    """`quant_lstm.run`'s outputs with the two directions in one scan (module doc); `rc` is
    R centered for both directions, one array (`_centered_stack`); `loop` is not used: the
    scan is this function's."""
    import jax
    from jax import lax

    seq, batch = x.shape[0], x.shape[1]
    acts = [a.build(xp) for a in at.activations[0]]
    f32 = np.float32
    xw, h, c, rs, bias, peep = [], [], [], [], [], []
    for d in range(2):
        xd = x[::-1] if at.reverse(d) else x
        xw.append(ql.qproduct(xp, xd.reshape(seq * batch, -1), wc[d],
                              ql.dir_param(w_scale, d)).reshape(seq, batch, 4 * H))
        h.append(xp.zeros((batch, H), f32) if h0 is None else h0[d].astype(f32))
        c.append(xp.zeros((batch, H), f32) if c0 is None else c0[d].astype(f32))
        rs.append(np.asarray(ql.dir_param(r_scale, d)))
        bias.append(None if b is None else (b[d, :4 * H] + b[d, 4 * H:]).astype(f32))
        peep.append(None if p is None else p[d].astype(f32))
    stacked = [rc, xp.stack(rs)] + [
        None if v[0] is None else xp.stack(v) for v in (bias, peep)]

    def one(xw_t, h, c, rd, rsd, bd, pd):
        step = make_step(at, xp, acts, [lambda v: ql.qproduct(xp, v, rd, rsd)], bd, pd, H)
        h, c = step(xw_t, [h, c])
        return h.astype(f32), c.astype(f32)

    mapped = jax.vmap(one, in_axes=[0, 0, 0, 0, 0] + [None if v is None else 0
                                                      for v in stacked[2:]])

    def body(carry, xw_t):
        h, c = mapped(xw_t, *carry, *stacked)
        return (h, c), h

    (h, c), y = lax.scan(body, (xp.stack(h), xp.stack(c)), xp.stack(xw, axis=1))
    ys = [y[:, d][::-1] if at.reverse(d) else y[:, d] for d in range(2)]
    return xp.stack(ys, axis=1), h, c
