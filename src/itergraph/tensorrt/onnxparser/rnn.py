"""ONNX LSTM, GRU and RNN into network loops (one loop per direction), as TensorRT's parser
builds them: an iterator over the time axis of X, recurrences for the hidden (and cell)
state, the gates from matrix products with W and R plus the biases, CONCATENATE outputs for
Y and LAST_VALUE outputs for Y_h (Y_c). With ``sequence_lens`` each batch entry keeps its
state, and outputs zeros, past its length (the reverse direction reverses each sequence
within its length). Refused as TensorRT refuses them: ``layout = 1``, ``input_forget = 1``,
activation functions that differ between the two directions, and unknown activations.
"""

from __future__ import annotations

import numpy as np

from ..enums import ActivationType, DataType, ElementWiseOperation, LoopOutput, MatrixOperation
from ..enums import TripLimit as TL
from .errors import ErrorCode, fail, node_name
from .helpers import act, cast, concat, ew, full, ints, unsqueeze
from .registry import importer

E = ElementWiseOperation
A = ActivationType
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                 "RNN": ["Tanh"]}
# ONNX activation name -> (TensorRT activation, default alpha, default beta); None: no value
_ACTS = {"relu": (A.RELU, None, None), "tanh": (A.TANH, None, None),
         "sigmoid": (A.SIGMOID, None, None), "leakyrelu": (A.LEAKY_RELU, 0.01, None),
         "thresholdedrelu": (A.THRESHOLDED_RELU, 1.0, None),
         "scaledtanh": (A.SCALED_TANH, 1.0, 1.0), "hardsigmoid": (A.HARD_SIGMOID, 0.2, 0.5),
         "elu": (A.ELU, 1.0, None), "softsign": (A.SOFTSIGN, None, None),
         "softplus": (A.SOFTPLUS, 1.0, 1.0)}


def _activations(node, attrs, n_dir: int) -> list[list[tuple]]:
    """Per direction, the (kind, alpha, beta) of each activation function."""
    names = list(attrs.get("activations", _DEFAULT_ACTS[node.op_type] * n_dir))
    per = len(_DEFAULT_ACTS[node.op_type])
    if len(names) != per * n_dir:
        fail(ErrorCode.INVALID_NODE, f"expected {per * n_dir} activations, got {len(names)}")
    alphas = list(attrs.get("activation_alpha", []))
    betas = list(attrs.get("activation_beta", []))
    out = []
    for name in names:
        key = name.lower()
        if key not in _ACTS:
            fail(ErrorCode.UNSUPPORTED_NODE_ATTR, f"activation '{name}' is not supported")
        kind, da, db = _ACTS[key]
        a = (alphas.pop(0) if alphas else da) if da is not None else 0.0
        b = (betas.pop(0) if betas else db) if db is not None else 0.0
        if key == "softplus":
            a, b = 1.0, 1.0
        out.append((kind, a, b))
    dirs = [out[i * per:(i + 1) * per] for i in range(n_dir)]
    if n_dir == 2 and [k for k, _, _ in dirs[0]] != [k for k, _, _ in dirs[1]]:
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "For bidirectional RNNs, activation functions must "
             "be the same for both the forward and reverse pass")
    return dirs


def _pick(ctx, v, d: int):
    """Entry d of the leading (direction) axis of `v`."""
    c = ctx.const(v)
    if c is not None:
        return ctx.tensor(np.ascontiguousarray(np.asarray(c)[d]))
    return ctx.name(ctx.network.add_gather(ctx.tensor(v), ints(ctx, np.int32(d)), 0)) \
        .get_output(0)


def _cols(ctx, t, k: int, h: int):
    """Columns ``[k*h, (k+1)*h)`` of the last axis of a rank-2 `t`."""
    layer = ctx.network.add_slice(t, [k * h], [h], [1])
    layer.axes = [len(t.shape) - 1]
    return ctx.name(layer).get_output(0)


def _mm(ctx, x, w):
    return ctx.name(ctx.network.add_matrix_multiply(
        x, MatrixOperation.NONE, w, MatrixOperation.TRANSPOSE)).get_output(0)


class _Cell:
    """One direction's weights and activations."""

    def __init__(self, ctx, node, ins, attrs, d: int, acts):
        self.ctx, self.op, self.acts = ctx, node.op_type, acts
        self.h = attrs["hidden_size"]
        self.clip = attrs.get("clip")
        g = _GATES[self.op]
        self.w, self.r = _pick(ctx, ins[1], d), _pick(ctx, ins[2], d)
        b = ins[3] if len(ins) > 3 and ins[3] is not None else None
        gh = g * self.h
        dt = self.w.compute_dtype
        if b is None:
            b = ctx.tensor(np.zeros(2 * gh, np.float32))
        else:
            b = _pick(ctx, b, d)
        b = cast(ctx, unsqueeze(ctx, b, [0]), dt)
        self.wb, self.rb = _cols(ctx, b, 0, gh), _cols(ctx, b, 1, gh)
        self.linear_before_reset = bool(attrs.get("linear_before_reset", 0))
        p = ins[7] if self.op == "LSTM" and len(ins) > 7 and ins[7] is not None else None
        self.p = None if p is None else unsqueeze(ctx, _pick(ctx, p, d), [0])

    def f(self, x, k: int):
        kind, a, b = self.acts[k]
        if self.clip is not None:
            x = act(self.ctx, A.CLIP, x, -self.clip, self.clip)
        return act(self.ctx, kind, x, a, b)

    def step(self, x_t, h, c):
        """(next h, next c) from input x_t [B, I] and state h (c) [B, H]."""
        ctx, H = self.ctx, self.h
        if self.op == "GRU":
            xw = ew(ctx, E.SUM, _mm(ctx, x_t, self.w), self.wb)
            hr = _mm(ctx, h, self.r)
            z = self.f(ew(ctx, E.SUM, _cols(ctx, xw, 0, H),
                          ew(ctx, E.SUM, _cols(ctx, hr, 0, H), _cols(ctx, self.rb, 0, H))), 0)
            r = self.f(ew(ctx, E.SUM, _cols(ctx, xw, 1, H),
                          ew(ctx, E.SUM, _cols(ctx, hr, 1, H), _cols(ctx, self.rb, 1, H))), 0)
            rh_b = _cols(ctx, self.rb, 2, H)
            if self.linear_before_reset:
                inner = ew(ctx, E.PROD, r, ew(ctx, E.SUM, _cols(ctx, hr, 2, H), rh_b))
            else:
                inner = ew(ctx, E.SUM, _mm(ctx, ew(ctx, E.PROD, r, h), _cols_rows(ctx, self.r,
                                                                                   2, H)), rh_b)
            cand = self.f(ew(ctx, E.SUM, _cols(ctx, xw, 2, H), inner), 1)
            one = ctx.tensor(np.ones((1, 1), np.float32))
            keep = ew(ctx, E.PROD, z, h)
            return ew(ctx, E.SUM, ew(ctx, E.PROD, ew(ctx, E.SUB, one, z), cand), keep), None
        gates = ew(ctx, E.SUM, ew(ctx, E.SUM, _mm(ctx, x_t, self.w), _mm(ctx, h, self.r)),
                   ew(ctx, E.SUM, self.wb, self.rb))
        if self.op == "RNN":
            return self.f(gates, 0), None
        gi, go, gf, gc = (_cols(ctx, gates, k, H) for k in range(4))
        if self.p is not None:
            gi = ew(ctx, E.SUM, gi, ew(ctx, E.PROD, _cols(ctx, self.p, 0, H), c))
            gf = ew(ctx, E.SUM, gf, ew(ctx, E.PROD, _cols(ctx, self.p, 2, H), c))
        i, f, cand = self.f(gi, 0), self.f(gf, 0), self.f(gc, 1)
        c_next = ew(ctx, E.SUM, ew(ctx, E.PROD, f, c), ew(ctx, E.PROD, i, cand))
        if self.p is not None:
            go = ew(ctx, E.SUM, go, ew(ctx, E.PROD, _cols(ctx, self.p, 1, H), c_next))
        o = self.f(go, 0)
        return ew(ctx, E.PROD, o, self.f(c_next, 2)), c_next


def _cols_rows(ctx, r, k: int, h: int):
    """Rows ``[k*h, (k+1)*h)`` of R (the candidate gate's recurrence weights)."""
    layer = ctx.network.add_slice(r, [k * h], [h], [1])
    layer.axes = [0]
    return ctx.name(layer).get_output(0)


def _state0(ctx, ins, index: int, d: int, like_x, h: int):
    if len(ins) > index and ins[index] is not None:
        return _pick(ctx, ins[index], d)
    # zeros [B, H]: B from X's axis 1
    shape = ctx.name(ctx.network.add_shape(like_x)).get_output(0)
    b = ctx.name(ctx.network.add_gather(shape, ints(ctx, [1]), 0)).get_output(0)
    return full(ctx, concat(ctx, [b, ints(ctx, [h])]), 0.0, like_x.compute_dtype)


@importer("LSTM", "GRU", "RNN")
def _rnn(ctx, node, ins, attrs):
    net = ctx.network
    if attrs["layout"] != 0:
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "`layout` attribute must be 0")
    if attrs.get("input_forget", 0):
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "`input_forget` attribute must be 0")
    direction = attrs.get("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        fail(ErrorCode.INVALID_NODE, f"unknown direction '{direction}'")
    n_dir = 2 if direction == "bidirectional" else 1
    acts = _activations(node, attrs, n_dir)
    x = ctx.tensor(ins[0])
    h = attrs["hidden_size"]
    lens = ins[4] if len(ins) > 4 and ins[4] is not None else None
    lens_t = None if lens is None else cast(ctx, lens, DataType.INT64)
    seq = ctx.name(net.add_gather(ctx.name(net.add_shape(x)).get_output(0),
                                  ints(ctx, np.int64(0)), 0)).get_output(0)
    trip = cast(ctx, seq, DataType.INT32)
    ys, hs, cs = [], [], []
    for d in range(n_dir):
        reverse = direction == "reverse" or d == 1
        cell = _Cell(ctx, node, ins, attrs, d, acts[d])
        xs = x
        if reverse and lens_t is not None:
            rs = net.add_reverse_sequence(x, lens_t)
            xs = ctx.name(rs).get_output(0)
        loop = net.add_loop()
        loop.name = f"{node_name(node)}_{'reverse' if reverse else 'forward'}"
        loop.add_trip_limit(trip, TL.COUNT)
        x_t = loop.add_iterator(xs, 0, reverse and lens_t is None).get_output(0)
        hr = loop.add_recurrence(_state0(ctx, ins, 5, d, x, h))
        cr = loop.add_recurrence(_state0(ctx, ins, 6, d, x, h)) if node.op_type == "LSTM" \
            else None
        h_next, c_next = cell.step(x_t, hr.get_output(0), cr and cr.get_output(0))
        y_t = h_next
        if lens_t is not None:
            t = loop.add_recurrence(ctx.tensor(np.asarray(0, np.int64)))
            t.set_input(1, ew(ctx, E.SUM, t.get_output(0), np.asarray(1, np.int64)))
            valid = unsqueeze(ctx, ew(ctx, E.LESS, t.get_output(0), lens_t), [1])
            zeros = ew(ctx, E.PROD, h_next, ctx.tensor(np.zeros((1, 1), np.float32)))
            h_next = ctx.name(net.add_select(valid, h_next, hr.get_output(0))).get_output(0)
            y_t = ctx.name(net.add_select(valid, y_t, zeros)).get_output(0)
            if cr is not None:
                c_next = ctx.name(net.add_select(valid, c_next, cr.get_output(0))).get_output(0)
        hr.set_input(1, h_next)
        if cr is not None:
            cr.set_input(1, c_next)
        kind = LoopOutput.REVERSE if reverse and lens_t is None else LoopOutput.CONCATENATE
        yo = loop.add_loop_output(y_t, kind, 0)
        yo.set_input(1, trip)
        y = yo.get_output(0)
        if reverse and lens_t is not None:
            y = ctx.name(net.add_reverse_sequence(y, lens_t)).get_output(0)
        ys.append(unsqueeze(ctx, y, [1]))
        hs.append(unsqueeze(ctx, loop.add_loop_output(hr.get_output(0), LoopOutput.LAST_VALUE)
                            .get_output(0), [0]))
        if cr is not None:
            cs.append(unsqueeze(ctx, loop.add_loop_output(cr.get_output(0),
                                                          LoopOutput.LAST_VALUE).get_output(0),
                                [0]))
    outs = [concat(ctx, ys, 1) if n_dir == 2 else ys[0],
            concat(ctx, hs, 0) if n_dir == 2 else hs[0]]
    if node.op_type == "LSTM":
        outs.append(concat(ctx, cs, 0) if n_dir == 2 else cs[0])
    return outs[: max(len(node.output), 1)]


__all__: list[str] = []
