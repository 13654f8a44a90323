"""ONNX ``LSTM``/``GRU``/``RNN`` -> OpenVINO ``LSTMSequence-5``/``GRUSequence-5``/``RNNSequence-5``.

The inverse of `read`: inputs become batch-major, LSTM gates go from ONNX ``i, o, f, c``
to OpenVINO ``f, i, c, o``, the two ONNX biases are summed (GRU with ``linear_before_reset``
keeps ``R_bh`` as a fourth block), missing initial states and sequence lengths are filled in
(zeros, and the full sequence length), and the outputs are transposed back to ONNX's layout.
Peepholes have no OpenVINO counterpart: an LSTM with non-zero peepholes is written as
standard nodes (a ``Scan`` over the steps, `onnx.rnn_expand`), and so is an LSTM, GRU or
RNN whose sequence lengths come from data on input shapes known only at run time (OpenVINO's
CPU plugin then ignores the lengths of its sequence ops). ``input_forget`` is refused
unless trivial.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError, where
from .....ir.graph import Node
from .....ir.types import DataType, TensorType
from .....semantics.recurrent import (
    ACTIVATION_OPS,
    DEFAULT_ACTIVATIONS,
    activation_names,
    clip_threshold,
)
from ....onnx.rnn_expand import gru_expansion, lstm_expansion
from ...elements import to_numpy
from ...export_table import exporter
from ...net_writer import NetWriter, Out
from ..basic.write import const_value, i64_port

I64 = DataType.INT64
#: activations OpenVINO's RNN sequences take, by their lower-case ONNX names (ONNX Runtime
#: matches the names without regard to case, so converters write 'sigmoid' as well)
_ACTS = set(ACTIVATION_OPS)


def _reorder_const(c: np.ndarray, order, axis: int) -> np.ndarray:
    blocks = np.split(c, len(order), axis=axis)
    return np.concatenate([blocks[i] for i in order], axis=axis)


def _reorder(w: NetWriter, o: Out, c, order, axis: int) -> Out:
    if c is not None:
        return w.const(_reorder_const(np.asarray(c), order, axis))
    if order == list(range(len(order))):
        return o
    parts = w.layer("Split", "opset1", [o, w.i64(axis)], {"num_splits": len(order)},
                    [(o.dtype, None)] * len(order))
    return w.one("Concat", "opset1", [parts[i] for i in order], {"axis": axis}, dtype=o.dtype)


def _hidden_size(node: Node, gates: int) -> int:
    """The hidden size H: the ``hidden_size`` attribute (optional in ONNX), else the last
    dimension of R (``[dirs, gates*H, H]``), else W's second one divided by the gates
    (``[dirs, gates*H, input]``)."""
    if node.attrs.get("hidden_size") is not None:
        hs = int(node.attrs["hidden_size"])
        _check_fits(node, gates, hs)
        return hs
    r_shape = _known_shape(node.inputs[2]) if len(node.inputs) > 2 else None
    if r_shape is not None and len(r_shape) == 3 and isinstance(r_shape[2], int):
        return int(r_shape[2])
    w_shape = _known_shape(node.inputs[1]) if len(node.inputs) > 1 else None
    if w_shape is not None and len(w_shape) == 3 and isinstance(w_shape[1], int) \
            and w_shape[1] % gates == 0 and w_shape[1] > 0:
        return w_shape[1] // gates
    raise UnsupportedError(f"{where(node)}: no hidden_size attribute, and neither R's shape "
                           f"([directions, {gates}*hidden_size, hidden_size]) nor W's is known: "
                           "OpenVINO's sequence needs the hidden size; give the node its "
                           "hidden_size or the model its input shapes")


# input index, name, (axis, gate blocks of hidden_size) its known shape must hold
_BLOCKS = ((1, "W", ((1, 1),)), (2, "R", ((1, 1), (2, 0))), (3, "B", ((1, 2),)))


def _check_fits(node: Node, gates: int, hs: int) -> None:
    """W ``[dirs, gates*H, input]``, R ``[dirs, gates*H, H]`` and B ``[dirs, 2*gates*H]``
    hold the hidden_size `hs`, where their shapes are known; else the node cannot run (both
    backends refuse it) and the IR would hold sizes OpenVINO reads another way."""
    for index, name, axes in _BLOCKS:
        shape = _known_shape(node.inputs[index]) if len(node.inputs) > index else None
        for axis, blocks in axes:
            want = hs * (gates * blocks if blocks else 1)
            if shape is not None and len(shape) > axis and isinstance(shape[axis], int) \
                    and shape[axis] != want:
                raise ModelError(f"{where(node)}: hidden_size {hs} does not fit {name} of "
                                 f"shape {list(shape)} (axis {axis} must be {want})")


def _known_shape(v) -> tuple | None:
    """`v`'s shape: its constant's, else its declared one (None when unknown)."""
    if v is None:
        return None
    if v.const is not None:
        return tuple(np.shape(v.const))
    t = v.type
    return tuple(t.shape) if isinstance(t, TensorType) and t.shape is not None else None


def _sequence(kind: str, gates: int):
    ov_type = {"LSTM": "LSTMSequence", "GRU": "GRUSequence", "RNN": "RNNSequence"}[kind]
    order = [2, 0, 3, 1] if kind == "LSTM" else list(range(gates))

    def tr(w: NetWriter, node: Node, ins):
        a = node.attrs
        hs = _hidden_size(node, gates)
        direction = a.get("direction", "forward")
        dirs = 2 if direction == "bidirectional" else 1
        layout = int(a.get("layout", 0))
        acts = activation_names(a.get("activations"), kind, dirs)
        n_act = len(DEFAULT_ACTIVATIONS[kind])
        if dirs == 2 and len(acts) == 2 * n_act and acts[:n_act] != acts[n_act:]:
            raise UnsupportedError(f"{where(node)}: different activations per direction cannot "
                                   "be written to OpenVINO")
        ov_acts = acts[:n_act]
        unknown = [x for x in ov_acts if x not in _ACTS]
        if unknown:
            raise UnsupportedError(f"{where(node)}: activation '{unknown[0]}' cannot be written "
                                   "(OpenVINO's RNN sequences take sigmoid, tanh and relu)")
        if a.get("input_forget", 0):
            raise UnsupportedError(f"{where(node)}: input_forget=1 cannot be written to OpenVINO")
        clip = clip_threshold(kind, a.get("clip"))
        if clip is not None and not clip > 0:
            raise UnsupportedError(f"{where(node)}: clip={clip} cannot be written to "
                                   "OpenVINO (its clip 0 means no clipping)")
        data = {"hidden_size": hs, "direction": direction, "activations": ov_acts,
                "activations_alpha": list(a.get("activation_alpha", []))[:n_act],
                "activations_beta": list(a.get("activation_beta", []))[:n_act],
                "clip": 0.0 if clip is None else clip}
        if kind == "GRU":
            data["linear_before_reset"] = bool(a.get("linear_before_reset", 0))
        lbr = kind == "GRU" and bool(a.get("linear_before_reset", 0))
        X = ins[0]
        if len(ins) > 7 and ins[7] is not None:
            p = const_value(node, 7)
            if p is None or np.any(np.asarray(p) != 0):
                return _as_standard_nodes(w, node)
        if dirs == 1 and _single_step(node, X, layout):
            return _as_cell(w, node, ins, kind, data, order, gates, hs, lbr, layout)
        dt = X.dtype
        npdt = to_numpy(dt) if dt is not None else np.float32
        x = X if layout else w.one("Transpose", "opset1", [X, w.i64([1, 0, 2])], dtype=dt)
        xshape = w.one("ShapeOf", "opset3", [x], {"output_type": "i64"}, dtype=I64)
        batch = w.one("Gather", "opset8", [xshape, w.i64([0]), w.i64(0)], {"batch_dims": 0},
                      dtype=I64)
        n_states = 2 if kind == "LSTM" else 1
        states = []
        for k in range(n_states):
            s = ins[5 + k] if len(ins) > 5 + k else None
            if s is None:
                shape = w.one("Concat", "opset1", [batch, w.i64([dirs, hs])], {"axis": 0},
                              dtype=I64)
                s = w.one("Broadcast", "opset3", [w.const(np.array(0, npdt)), shape],
                          {"mode": "numpy"}, dtype=dt)
            elif not layout:
                s = w.one("Transpose", "opset1", [s, w.i64([1, 0, 2])], dtype=dt)
            states.append(s)
        lens = ins[4] if len(ins) > 4 else None
        if lens is not None and not _static(X.shape) and not _full_lengths(node, X, layout) \
                and _from_data(node.inputs[4]):
            return _as_standard_nodes(w, node)
        if lens is None:
            seq = w.one("Gather", "opset8", [xshape, w.i64([1]), w.i64(0)], {"batch_dims": 0},
                        dtype=I64)
            lens = w.one("Broadcast", "opset3", [seq, batch], {"mode": "numpy"}, dtype=I64)
        else:
            lens = i64_port(w, lens)
        W = _reorder(w, ins[1], const_value(node, 1), order, 1)
        R = _reorder(w, ins[2], const_value(node, 2), order, 1)
        B = _bias(w, node, ins, hs, gates, dirs, order, lbr, npdt)
        outs = w.layer(ov_type, "opset5", [x, *states, lens, W, R, B], data,
                       [(dt, None)] * (1 + n_states))
        y = outs[0]  # [batch, dirs, seq, hs]
        y = w.one("Transpose", "opset1", [y, w.i64([0, 2, 1, 3] if layout else [2, 1, 0, 3])],
                  dtype=dt)
        res = [y]
        for o in outs[1:]:
            res.append(o if layout else w.one("Transpose", "opset1", [o, w.i64([1, 0, 2])],
                                              dtype=dt))
        return res[:len(node.outputs)] + [None] * (len(node.outputs) - len(res))

    return tr


def _static(shape) -> bool:
    return shape is not None and all(isinstance(d, int) for d in shape)


def _full_lengths(node: Node, X: Out, layout: int) -> bool:
    """Whether the sequence lengths are a constant equal to the static sequence length."""
    c = node.inputs[4].const if len(node.inputs) > 4 and node.inputs[4] is not None else None
    t = X.shape[1 if layout else 0] if X.shape is not None and len(X.shape) == 3 else None
    return c is not None and isinstance(t, int) and bool(np.all(np.asarray(c) == t))


#: ops through which lengths computed from shapes stay computed from shapes
_SHAPE_ARITHMETIC = {"Shape", "Size", "Constant", "ConstantOfShape", "Gather", "Cast", "Expand",
                     "Unsqueeze", "Squeeze", "Concat", "Tile", "Reshape", "Slice", "Identity",
                     "Add", "Sub", "Mul", "Div", "Min", "Max", "Range"}


def _from_data(lens) -> bool:
    """Whether sequence lengths depend on the values of a graph input (the lengths a user
    feeds), rather than only on shapes and constants (a full-length vector written by a
    converter, as OpenVINO's sequences always carry one)."""
    todo, seen = [lens], set()
    while todo:
        v = todo.pop()
        if v is None or v.uid in seen or v.const is not None:
            continue
        seen.add(v.uid)
        p = v.producer
        if p is None:
            return True  # a graph input or a body parameter: data
        if p.op_type in ("Shape", "Size"):
            continue
        if p.op_type not in _SHAPE_ARITHMETIC:
            return True
        todo.extend(p.reads())
    return False


def _single_step(node: Node, X: Out, layout: int) -> bool:
    """True when the sequence is one step long (a cell: OpenVINO keeps cells in loop bodies)."""
    if X.shape is None or len(X.shape) != 3 or X.shape[1 if layout else 0] != 1:
        return False
    lens = node.inputs[4] if len(node.inputs) > 4 else None
    if lens is None:
        return True
    c = lens.const
    return c is not None and bool(np.all(np.asarray(c) == 1))


def _as_cell(w: NetWriter, node: Node, ins, kind, data, order, gates, hs, lbr, layout):
    """A one-step ONNX sequence as an OpenVINO cell (LSTMCell-4, GRUCell-3, RNNCell-1)."""
    X = ins[0]
    dt = X.dtype
    npdt = to_numpy(dt) if dt is not None else np.float32
    seq_axis = 1 if layout else 0

    def drop(o: Out, axis: int) -> Out:
        return w.one("Squeeze", "opset1", [o, w.i64([axis])], dtype=o.dtype)

    def first(i: int, axis: int = 1):
        c = const_value(node, i)
        if c is not None:
            return w.const(_reorder_const(np.asarray(c), order, axis)[0])
        return drop(_reorder(w, ins[i], None, order, axis), 0)

    x = drop(X, seq_axis)
    n_states = 2 if kind == "LSTM" else 1
    states = []
    for k in range(n_states):
        s = ins[5 + k] if len(ins) > 5 + k else None
        if s is None:
            shape = w.one("ShapeOf", "opset3", [x], {"output_type": "i64"}, dtype=I64)
            batch = w.one("Gather", "opset8", [shape, w.i64([0]), w.i64(0)], {"batch_dims": 0},
                          dtype=I64)
            dims = w.one("Concat", "opset1", [batch, w.i64([hs])], {"axis": 0}, dtype=I64)
            s = w.one("Broadcast", "opset3", [w.const(np.array(0, npdt)), dims],
                      {"mode": "numpy"}, dtype=dt)
        else:
            s = drop(s, 1 if layout else 0)
        states.append(s)
    W, R = first(1), first(2)
    B = drop(_bias(w, node, ins, hs, gates, 1, order, lbr, npdt), 0)
    cell = {"LSTM": ("LSTMCell", "opset4"), "GRU": ("GRUCell", "opset3"),
            "RNN": ("RNNCell", "opset1")}[kind]
    cdata = {k: v for k, v in data.items() if k != "direction"}
    outs = w.layer(cell[0], cell[1], [x, *states, W, R, B], cdata, [(dt, None)] * n_states)
    h = outs[0]
    y = w.one("Unsqueeze", "opset1", [h, w.i64([0, 1] if not layout else [1, 2])], dtype=dt)
    res = [y] + [w.one("Unsqueeze", "opset1", [o, w.i64([1 if layout else 0])], dtype=dt)
                 for o in outs]
    return res[:len(node.outputs)] + [None] * (len(node.outputs) - len(res))


def _bias(w: NetWriter, node: Node, ins, hs, gates, dirs, order, lbr, npdt) -> Out:
    n_ov = gates + (1 if lbr else 0)
    b_in = ins[3] if len(ins) > 3 else None
    if b_in is None:
        return w.const(np.zeros((dirs, n_ov * hs), npdt))
    c = const_value(node, 3)
    if c is not None:
        c = np.asarray(c)
        wb, rb = c[:, :gates * hs], c[:, gates * hs:]
        if lbr:
            summed = wb[:, :2 * hs] + rb[:, :2 * hs]
            return w.const(np.concatenate([summed, wb[:, 2 * hs:], rb[:, 2 * hs:]], axis=1))
        return w.const(_reorder_const(wb + rb, order, 1))
    halves = w.layer("Split", "opset1", [b_in, w.i64(1)], {"num_splits": 2},
                     [(b_in.dtype, None)] * 2)
    if lbr:
        wp = w.layer("Split", "opset1", [halves[0], w.i64(1)], {"num_splits": 3},
                     [(b_in.dtype, None)] * 3)
        rp = w.layer("Split", "opset1", [halves[1], w.i64(1)], {"num_splits": 3},
                     [(b_in.dtype, None)] * 3)
        z = w.one("Add", "opset1", [wp[0], rp[0]], {"auto_broadcast": "numpy"}, dtype=b_in.dtype)
        r = w.one("Add", "opset1", [wp[1], rp[1]], {"auto_broadcast": "numpy"}, dtype=b_in.dtype)
        return w.one("Concat", "opset1", [z, r, wp[2], rp[2]], {"axis": 1}, dtype=b_in.dtype)
    summed = w.one("Add", "opset1", halves, {"auto_broadcast": "numpy"}, dtype=b_in.dtype)
    return _reorder(w, summed, None, order, 1)


exporter("LSTM", since=7)(_sequence("LSTM", 4))
exporter("GRU", since=7)(_sequence("GRU", 3))
exporter("RNN", since=7)(_sequence("RNN", 1))


def _as_standard_nodes(w: NetWriter, node: Node) -> list:
    """The LSTM, GRU or RNN `node` written as its standard-node expansion (`rnn_expand`):
    for peepholes, and for sequence lengths on shapes known only at run time."""
    body = lstm_expansion(node) if node.op_type == "LSTM" else gru_expansion(node)
    present = [v for v in node.inputs if v is not None]
    for formal, actual in zip(body.inputs, present):
        w.env[formal.uid] = w.get(actual, node)
    w.write_nodes(body)
    return [w.get(o, node) if v is not None else None
            for v, o in zip(node.outputs, body.outputs)]
