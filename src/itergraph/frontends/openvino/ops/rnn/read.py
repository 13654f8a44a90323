"""Translators of OpenVINO recurrent cells and sequences into ONNX ``LSTM``/``GRU``/``RNN``.

Layout differences from ONNX:
- LSTM gates are ``f, i, c, o`` in OpenVINO (``weights_format="fico"``) and ``i, o, f, c`` in
  ONNX: constant weights are reordered at import, computed ones through ``Split``+``Concat``.
  GRU gates are ``z, r, h`` in both.
- OpenVINO biases are one vector per gate (``W_b + R_b``); ONNX has separate ``W_b`` and
  ``R_b``: the OpenVINO bias becomes ``W_b`` and ``R_b`` is zero. GRU with
  ``linear_before_reset`` has a fourth bias block (``R_bh``), which goes into ``R_b``.
- Cells take ``[batch, ...]`` tensors; they run as ONNX sequences of length 1.
- Sequences (opset 5) are batch-major (``X [batch, seq, in]``, ``Y [batch, dirs, seq, hs]``);
  ONNX is sequence-major, so inputs and outputs are transposed.
- OpenVINO applies one list of activations to both directions of a bidirectional sequence
  (only its first entries, when more are given); ONNX wants one list per direction.
- The legacy LSTMCell of the TensorIterator specification's example (5 inputs: ``W`` of shape
  ``[4*hs, in+hs]`` holding W and R side by side, and ``B``) is accepted too.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType
from .....semantics.recurrent import ACTIVATION_OPS, activation_names
from ...builder import Builder, dtype_of, rank_of, shape_of
from ...elements import to_numpy
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype


def _activations(layer: Layer, default: list[str], dirs: int) -> dict:
    """ONNX activation attributes: OpenVINO applies its first ``len(default)`` activations to
    every direction (further ones, as OpenVINO's ONNX frontend copies them from a bidirectional
    ONNX node, are ignored by OpenVINO); ONNX lists them per direction."""
    names = layer.strs_attr("activations", default)
    if len(names) < len(default):
        raise ModelError(f"{layer.where()}: {len(default)} activations are needed, "
                         f"{len(names)} given")
    names = names[:len(default)]
    try:
        acts = [ACTIVATION_OPS[a.lower()] for a in names]
    except KeyError as e:
        raise UnsupportedError(f"{layer.where()}: activation {e} is not supported") from None
    attrs: dict = {"activations": acts * dirs}
    alpha = layer.attr("activations_alpha")
    beta = layer.attr("activations_beta")
    if alpha:
        attrs["activation_alpha"] = [float(v) for v in alpha.split(",") if v.strip()] * dirs
    if beta:
        attrs["activation_beta"] = [float(v) for v in beta.split(",") if v.strip()] * dirs
    clip = layer.float_attr("clip", 0.0)
    if clip:
        attrs["clip"] = float(clip)
    return attrs


def reorder(b: Builder, v, order: list[int], axis: int, dt=None):
    """Blocks of `v` along `axis` (len(order) equal blocks) in the order `order`."""
    if order == list(range(len(order))):
        return v
    c = b.value_of(v)
    if c is not None:
        return b.const(np.concatenate([np.split(c, len(order), axis=axis)[i] for i in order],
                                      axis=axis))
    parts = b.op("Split", [v], {"axis": axis, "num_outputs": len(order)}, outputs=len(order),
                 dtype=dt or dtype_of(v))
    return b.op("Concat", [parts[i] for i in order], {"axis": axis}, dtype=dt or dtype_of(v))


def _static(shape) -> bool:
    return shape is not None and all(isinstance(d, int) for d in shape)


def _zeros_like_blocks(b: Builder, v, blocks: int, hs: int, lead: tuple, dt) -> object:
    """Zeros of `blocks` blocks of hidden_size `hs` after `lead`: a constant when `v` (the
    bias they complete, its blocks checked against `hs`) has a known shape; else zeros of
    `v`'s own shape at run time (``v`` holds exactly `blocks` blocks), so that a hidden_size
    that does not fit the weights allocates nothing and the cell's kernel names it."""
    np_dt = to_numpy(dt) if dt else np.float32
    if _static(shape_of(v)):
        return b.const(np.zeros(lead + (blocks * hs,), np_dt))
    dims = b.op("Shape", [v], dtype=DataType.INT64)
    return b.op("ConstantOfShape", [dims], {"value": np.zeros(1, np_dt)}, dtype=dt)


def _check_blocks(layer: Layer, v, what: str, blocks: int, hs: int, axis: int) -> None:
    """`v` holds `blocks` blocks of `hs` along `axis`, where its shape says (a hidden_size
    that does not fit the weights is refused before anything of its size is allocated)."""
    shape = shape_of(v)
    if shape is None or axis >= len(shape) or not isinstance(shape[axis], int):
        return
    if shape[axis] != blocks * hs:
        raise ModelError(f"{layer.where()}: {what} of shape {list(shape)} does not hold "
                         f"{blocks} gate block(s) of hidden_size {hs} along axis {axis}")


def _lstm_order(layer: Layer) -> list[int]:
    fmt = (layer.attr("weights_format", "fico") or "fico").lower()
    if sorted(fmt) != sorted("fico"):
        raise ModelError(f"{layer.where()}: weights_format '{fmt}' is not a gate order")
    return [fmt.index(g) for g in "iofc"]


def _hidden(layer: Layer) -> int:
    hs = layer.int_attr("hidden_size", required=True)
    if hs < 1:
        raise ModelError(f"{layer.where()}: hidden_size {hs} must be positive")
    return hs


@importer("LSTMCell", since=1)
def _lstm_cell(b: Builder, layer: Layer, x):
    hs = _hidden(layer)
    dt = out_dtype(layer, x)
    order = _lstm_order(layer)
    X, H, C = x[0], x[1], x[2]
    if len(x) == 5 and (rank_of(x[4]) == 1 or len(layer.inputs[4].shape) == 1):
        # legacy IR: W holds [W | R] along axis 1, then B
        wr = b.need_const(x[3], layer, "the combined weights")
        n_in = wr.shape[1] - hs
        if wr.shape[0] != 4 * hs or n_in < 1:
            raise ModelError(f"{layer.where()}: combined weights of shape {wr.shape} do not fit "
                             f"hidden_size {hs}")
        W, R, B = b.const(wr[:, :n_in]), b.const(wr[:, n_in:]), x[4]
        P = None
    else:
        if len(x) < 5:
            raise ModelError(f"{layer.where()}: LSTMCell needs X, H, C, W, R")
        W, R = x[3], x[4]
        B = x[5] if len(x) > 5 else None
        P = x[6] if len(x) > 6 else None
    return _run_cell(b, layer, "LSTM", hs, dt, order, X, [H, C], W, R, B, P, 2,
                     _activations(layer, activation_names(None, "LSTM", 1), 1), 4)


@importer("GRUCell", since=3)
def _gru_cell(b: Builder, layer: Layer, x):
    hs = _hidden(layer)
    dt = out_dtype(layer, x)
    attrs = _activations(layer, activation_names(None, "GRU", 1), 1)
    attrs["linear_before_reset"] = 1 if layer.bool_attr("linear_before_reset") else 0
    B = x[4] if len(x) > 4 else None
    return _run_cell(b, layer, "GRU", hs, dt, [0, 1, 2], x[0], [x[1]], x[2], x[3], B, None, 1,
                     attrs, 3)


@importer("RNNCell", since=1)
def _rnn_cell(b: Builder, layer: Layer, x):
    hs = _hidden(layer)
    dt = out_dtype(layer, x)
    B = x[4] if len(x) > 4 else None
    return _run_cell(b, layer, "RNN", hs, dt, [0], x[0], [x[1]], x[2], x[3], B, None, 1,
                     _activations(layer, activation_names(None, "RNN", 1), 1), 1)


def _onnx_bias(b: Builder, layer: Layer, B, hs: int, gates: int, order, lbr: bool, dt,
               lead: tuple, axis: int):
    """ONNX ``[W_b, R_b]`` from an OpenVINO bias (blocks along `axis`)."""
    if B is None:
        return None
    _check_blocks(layer, B, "B", gates + (1 if lbr else 0), hs, axis)
    c = b.value_of(B)
    if c is not None:
        blocks = np.split(c, gates + (1 if lbr else 0), axis=axis)
        wb = np.concatenate([blocks[i] for i in order], axis=axis)
        rb = np.zeros_like(wb)
        if lbr:  # GRU: [z, r, h_w, h_r] -> W_b [z, r, h_w], R_b [0, 0, h_r]
            wb = np.concatenate(blocks[:3], axis=axis)
            rb = np.concatenate([np.zeros_like(blocks[0]), np.zeros_like(blocks[0]), blocks[3]],
                                axis=axis)
        return b.const(np.concatenate([wb, rb], axis=axis))
    if lbr:
        parts = b.op("Split", [B], {"axis": axis, "num_outputs": 4}, outputs=4, dtype=dt)
        two = B if _static(shape_of(B)) else \
            b.op("Concat", [parts[0], parts[1]], {"axis": axis}, dtype=dt)
        zeros = _zeros_like_blocks(b, two, 2, hs, lead, dt)
        return b.op("Concat", [parts[0], parts[1], parts[2], zeros, parts[3]], {"axis": axis},
                    dtype=dt)
    wb = reorder(b, B, order, axis, dt)
    zeros = _zeros_like_blocks(b, B, gates, hs, lead, dt)
    return b.op("Concat", [wb, zeros], {"axis": axis}, dtype=dt)


def _run_cell(b: Builder, layer: Layer, op: str, hs: int, dt, order, X, states, W, R, B, P,
              n_out: int, attrs: dict, gates: int):
    lbr = bool(attrs.get("linear_before_reset"))
    if P is not None:
        pc = b.value_of(P)
        if pc is None or np.any(pc != 0):
            P = b.unsqueeze(P, [0])
        else:
            P = None
    for v, what in ((W, "W"), (R, "R")):
        _check_blocks(layer, v, what, gates, hs, 0)
    x1 = b.unsqueeze(X, [0])
    w1 = b.unsqueeze(reorder(b, W, order, 0, dt), [0])
    r1 = b.unsqueeze(reorder(b, R, order, 0, dt), [0])
    b1 = _onnx_bias(b, layer, B, hs, gates, order, lbr, dt, (), 0)
    if b1 is not None:
        b1 = b.unsqueeze(b1, [0])
    s1 = [b.unsqueeze(s, [0]) for s in states]
    ins = [x1, w1, r1, b1, None, *s1]
    if P is not None:
        ins.append(P)
    a = dict(attrs, hidden_size=hs)
    if op == "LSTM" and layer.bool_attr("input_forget"):
        a["input_forget"] = 1
    outs = b.op(op, ins, a, outputs=3 if op == "LSTM" else 2, dtype=dt)
    res = [b.squeeze(outs[1], [0])]
    if op == "LSTM":
        res.append(b.squeeze(outs[2], [0]))
    return res


def _sequence(op: str, gates: int):
    def tr(b: Builder, layer: Layer, x):
        hs = _hidden(layer)
        dt = out_dtype(layer, x)
        direction = (layer.attr("direction", "forward") or "forward").lower()
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ModelError(f"{layer.where()}: unknown direction '{direction}'")
        dirs = 2 if direction == "bidirectional" else 1
        attrs = _activations(layer, activation_names(None, op, 1), dirs)
        attrs["direction"] = direction
        attrs["hidden_size"] = hs
        n_states = 2 if op == "LSTM" else 1
        if len(x) < 3 + n_states + 2:
            raise ModelError(f"{layer.where()}: {op} sequence needs {5 + n_states} inputs")
        X, states = x[0], x[1:1 + n_states]
        lens, W, R = x[1 + n_states], x[2 + n_states], x[3 + n_states]
        B = x[4 + n_states] if len(x) > 4 + n_states else None
        order = [1, 3, 0, 2] if op == "LSTM" else list(range(gates))
        lbr = False
        if op == "GRU":
            lbr = layer.bool_attr("linear_before_reset")
            attrs["linear_before_reset"] = 1 if lbr else 0
        for v, what in ((W, "W"), (R, "R")):
            _check_blocks(layer, v, what, gates, hs, 1)
        xs = b.transpose(X, [1, 0, 2])
        ss = [b.transpose(s, [1, 0, 2]) for s in states]
        w = reorder(b, W, order, 1, dt)
        r = reorder(b, R, order, 1, dt)
        bias = _onnx_bias(b, layer, B, hs, gates, order, lbr, dt, (dirs,), 1)
        sl = b.cast(lens, DataType.INT32)
        outs = b.op(op, [xs, w, r, bias, sl, *ss], attrs, outputs=1 + n_states, dtype=dt)
        y = b.transpose(outs[0], [2, 1, 0, 3])
        return [y] + [b.transpose(o, [1, 0, 2]) for o in outs[1:]]

    return tr


importer("LSTMSequence", since=5)(_sequence("LSTM", 4))
importer("GRUSequence", since=5)(_sequence("GRU", 3))
importer("RNNSequence", since=5)(_sequence("RNN", 1))
