"""NumPy kernel of ONNX Runtime's ``com.microsoft.DynamicQuantizeLSTM``: the arithmetic of
`backends.common.quant_lstm` (which states it), a Python loop over the time steps.

The usual cell (sigmoid, tanh, tanh, no peepholes) runs the same operations in place
(`contrib_lstm_steps`) where the recurrent product is exact in float32; any other cell runs
the shared step of `backends.common.rnn`. Constant weights are prepared once
(`ms_quant.Memo`).
"""

from __future__ import annotations

import numpy as np

from ....ir.attributes import const_input
from ....semantics import exact_int
from ....semantics import ms_quant as mq
from ...common import quant_lstm as ql
from ...common.rnn import make_step
from . import contrib_lstm_steps as steps
from . import kernel


def qproduct(xp, x, w, ws, wzp, memo=None):
    """``float((q(x) - zx) @ (w - wzp)) * (sx * ws)`` with `x` dynamically quantized."""
    qx, sx, zx = mq.dynamic_quantize(xp, x)
    acc = mq.int_matmul(xp, qx, zx, w, wzp, memo)
    return mq.scaled(xp, acc, sx * ws.astype(np.float32), None)


@kernel("DynamicQuantizeLSTM", domain=ql.DOMAIN)
def _dynamic_quantize_lstm(node, ctx):
    at = ql.lstm_attrs(node)
    n_out = len(node.outputs)
    w_const, r_const = const_input(node, 1), const_input(node, 2)
    memos = [(mq.Memo(None if w_const is None else w_const[d]),
              mq.Memo(None if r_const is None else r_const[d])) for d in range(at.dirs)]

    def fn(x, w, r, b=None, seq_lens=None, h0=None, c0=None, p=None,
           w_scale=None, w_zp=None, r_scale=None, r_zp=None):
        H = ql.check(node, at, x, w, r, seq_lens, w_scale, w_zp, r_scale, r_zp)
        seq, batch = x.shape[0], x.shape[1]
        ys, hs, cs = [], [], []
        for d in range(at.dirs):
            wzp = ql.dir_param(w_zp, d)[0]
            rzp = ql.dir_param(r_zp, d)[0]
            ws, rs = ql.dir_param(w_scale, d), ql.dir_param(r_scale, d)
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
