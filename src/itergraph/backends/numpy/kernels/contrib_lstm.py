"""NumPy kernel of ONNX Runtime's ``com.microsoft.DynamicQuantizeLSTM``: the arithmetic of
`backends.common.quant_lstm`, a Python loop over the time steps. Constant weights are
centered once (`ms_quant.Memo`)."""

from __future__ import annotations

import numpy as np

from ....ir.attributes import const_input
from ....semantics import ms_quant as mq
from ...common import quant_lstm as ql
from . import kernel


def _loop(step, xw, h, c):
    y = np.empty(xw.shape[:2] + h.shape[1:], np.float32)
    for t in range(xw.shape[0]):
        h, c = step(xw[t], [h, c])
        h, c = h.astype(np.float32), c.astype(np.float32)
        y[t] = h
    return y, h, c


@kernel("DynamicQuantizeLSTM", domain=ql.DOMAIN)
def _dynamic_quantize_lstm(node, ctx):
    at = ql.lstm_attrs(node)
    n_out = len(node.outputs)
    memo_w, memo_r = mq.Memo(const_input(node, 1)), mq.Memo(const_input(node, 2))

    def fn(x, w, r, b=None, seq_lens=None, h0=None, c0=None, p=None,
           w_scale=None, w_zp=None, r_scale=None, r_zp=None):
        H = ql.check(node, at, x, w, r, seq_lens, w_scale, w_zp, r_scale, r_zp)
        wc = memo_w.centered(np, w, ql.zero_points(w_zp, at.dirs), ql.QUANTIZED)
        rc = memo_r.centered(np, r, ql.zero_points(r_zp, at.dirs), ql.QUANTIZED)
        y, h, c = ql.run(np, at, _loop, H, x, wc, rc, b, h0, c0, p, w_scale, r_scale)
        outs = (np.ascontiguousarray(y), h, c)
        return outs[0] if n_out == 1 else outs[:n_out]

    return fn
