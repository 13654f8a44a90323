"""NumPy kernel of ONNX Runtime's ``com.microsoft.DynamicQuantizeLSTM``: the arithmetic of
`backends.common.quant_lstm` (which states it), a Python loop over the time steps.

The usual cell (sigmoid, tanh, tanh, no peepholes) runs the same operations in place
(`contrib_lstm_steps`) where the recurrent product is exact in float32, both directions of a
bidirectional LSTM in lockstep when both can; any other cell runs the shared step of
`backends.common.rnn`. Constant weights are prepared once
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
    kept: list = []  # the directions' recurrent operands last stacked, and the stack

    def fn(x, w, r, b=None, seq_lens=None, h0=None, c0=None, p=None,
           w_scale=None, w_zp=None, r_scale=None, r_zp=None):
        H = ql.check(node, at, x, w, r, seq_lens, w_scale, w_zp, r_scale, r_zp)
        dirs = [_direction(at, d, memos[d], x, w if w is not w_const else None,
                           r if r is not r_const else None, b, (h0, c0, p),
                           (w_scale, w_zp, r_scale, r_zp), H)
                for d in range(at.dirs)]
        if all(dr["standard"] for dr in dirs):  # every direction at once (`steps.run`)
            y, h, c = steps.run(*_stacked(dirs, b is None, kept), at.clip)
            results = [(y[d], h[d], c[d]) for d in range(at.dirs)]
        else:
            results = [_alone(at, d, dr, b is None) for d, dr in enumerate(dirs)]
        ys = [y[::-1] if at.reverse(d) else y for d, (y, _, _) in enumerate(results)]
        outs = (np.ascontiguousarray(np.stack(ys, axis=1)),
                np.stack([h for _, h, _ in results]), np.stack([c for _, _, c in results]))
        return outs[0] if n_out == 1 else outs[:n_out]

    return fn


def _direction(at, d, memo, x, w, r, b, states, params, H) -> dict:
    """Direction `d` prepared: its scaled input products ``xw`` ``[seq, batch, 4H]`` (in
    its step order), recurrent operand, scale, bias and initial states, and whether it runs
    on the in-place steps (``standard``). `w`, `r`: None where they are the constant
    weights `memo` holds; `states` ``(h0, c0, peepholes)``; `params` the scales and zero
    points ``(w_scale, w_zp, r_scale, r_zp)``."""
    (h0, c0, p), (w_scale, w_zp, r_scale, r_zp) = states, params
    seq, batch = x.shape[0], x.shape[1]
    wzp = ql.dir_param(w_zp, d)[0]
    rzp = ql.dir_param(r_zp, d)[0]
    ws, rs = ql.dir_param(w_scale, d), ql.dir_param(r_scale, d)
    mw, mr = memo
    rd = mr.const if r is None else r[d]
    wd = mw.const if w is None else w[d]
    xd = x[::-1] if at.reverse(d) else x
    xw = qproduct(np, xd.reshape(seq * batch, -1), wd, ws, wzp, mw).reshape(seq, batch, 4 * H)
    bias = None if b is None else (b[d, :4 * H] + b[d, 4 * H:]).astype(np.float32)
    h = np.zeros((batch, H), np.float32) if h0 is None else h0[d].astype(np.float32)
    c = np.zeros((batch, H), np.float32) if c0 is None else c0[d].astype(np.float32)
    pd = None if p is None else p[d].astype(np.float32)
    r_op = mr.operand(rd, rzp, (0,))
    standard = steps.standard_cell(at, d, pd) and exact_int.float32_exact(255, r_op)
    return {"xw": xw, "r": r_op.f32, "rs": rs, "bias": bias, "h": h, "c": c,
            "standard": standard,
            "generic": dict(xw=xw, rd=rd, rs=rs, rzp=rzp, mr=mr, bias=bias, peep=pd, h=h, c=c)}


def _stacked(dirs: list[dict], no_bias: bool, kept: list | None = None) -> tuple:
    """`contrib_lstm_steps.run`'s arguments for the directions `dirs`, but the clip.

    `kept` (a list, empty at first) keeps the last stack of the recurrent operands, with
    them: the constant weights' operands are the same arrays on every call (`ms_quant.Memo`;
    an operand is never written to), and stacking them anew copied megabytes per call (8 MiB
    for ddddocr's 2 x 512 x 2048 CRNN, into freshly mapped pages) for steps that only read
    them."""
    rs = [dr["r"] for dr in dirs]
    if kept and len(kept[0]) == len(rs) and all(a is b for a, b in zip(kept[0], rs)):
        r = kept[1]
    else:
        r = np.stack(rs)
        if kept is not None:
            kept[:] = [rs, r]
    return (np.stack([dr["xw"] for dr in dirs]), r,
            [dr["rs"] for dr in dirs], None if no_bias else [dr["bias"] for dr in dirs],
            np.stack([dr["h"] for dr in dirs]), np.stack([dr["c"] for dr in dirs]))


def _alone(at, d, dr: dict, no_bias: bool) -> tuple:
    """``(Y, h, c)`` of one prepared direction run by itself."""
    if not dr["standard"]:
        return _generic(at, d, **dr["generic"])
    y, h, c = steps.run(*_stacked([dr], no_bias), at.clip)
    return y[0], h[0], c[0]


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
