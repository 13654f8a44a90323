"""JAX lowering of ONNX Runtime's ``com.microsoft.DynamicQuantizeLSTM``: the arithmetic of
`backends.common.quant_lstm` (that of the NumPy kernel), the time loop a ``lax.scan``. Its
scales and zero points must be known at compile time; constant weights are centered once,
on the host (`OpContext.prepared`)."""

from __future__ import annotations

import numpy as np

from ....semantics import ms_quant as mq
from ...common import quant_lstm as ql
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
    wc = _centered(cx, w, ql.zero_points(w_zp, at.dirs))
    rc = _centered(cx, r, ql.zero_points(r_zp, at.dirs))
    outs = ql.run(cx.xp, at, _loop, H, x, wc, rc, b, h0, c0, p, w_scale, r_scale)
    return outs[0] if len(cx.node.outputs) == 1 else outs[:len(cx.node.outputs)]
