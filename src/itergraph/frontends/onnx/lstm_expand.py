"""ONNX ``LSTM`` as standard nodes, for writers whose LSTM has no peepholes (OpenVINO's
sequences and cells have none): per direction ``X @ W^T`` over all steps, then a ``Scan``
over the steps whose body adds ``h @ R^T`` and the two biases and runs the gates with the
peepholes (`contrib_expand.lstm_body`, the body ``DynamicQuantizeLSTM``'s expansion uses).

Activations Sigmoid, Tanh and Relu by any case, ``clip``, ``input_forget``, ``layout`` and
``sequence_lens`` are written: with lengths, a ``[seq, batch]`` mask (step < length) is
scanned beside the steps, and a row past its length keeps its state and outputs zeros; the
reverse direction scans the reversed steps and mask, so each row starts at its own last step
(ONNX Runtime).
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ...errors import UnsupportedError, where
from ...ir.graph import Graph, Node
from .contrib_expand import _LSTM_ACTS, _attr, _Builder, _reverse, lstm_body


def lstm_expansion(node: Node) -> Graph:
    """`node` (ONNX LSTM) as a graph of standard nodes: inputs the node's present inputs,
    outputs its outputs."""
    b = _Builder(node)
    _lstm(b, node)
    return b.graph()


def _names(node: Node, dirs: int) -> list[str]:
    names = [str(a).lower() for a in (_attr(node, "activations") or [])] or \
        ["sigmoid", "tanh", "tanh"] * dirs
    if len(names) == 3 and dirs == 2:
        names = names * 2
    for a in names:
        if a not in _LSTM_ACTS:
            raise UnsupportedError(f"{where(node)}: activation '{a}' is not written with "
                                   "standard ops (Sigmoid, Tanh, Relu)")
    return names


def _i64(b: _Builder, *v: int) -> str:
    return b.init(np.array(v, np.int64))


def _lstm(b: _Builder, node: Node) -> None:
    H = _attr(node, "hidden_size")
    if H is None:
        raise UnsupportedError(f"{where(node)}: written with standard ops only with a "
                               "hidden_size attribute")
    H, direction = int(H), _attr(node, "direction", "forward")
    dirs = 2 if direction == "bidirectional" else 1
    names = _names(node, dirs)
    layout = int(_attr(node, "layout", 0))
    x = b.op("Transpose", [b.input(0)], perm=[1, 0, 2]) if layout else b.input(0)
    xs = b.op("Shape", [x])
    batch = b.op("Slice", [xs, _i64(b, 1), _i64(b, 2)])
    state_shape = b.op("Concat", [batch, _i64(b, H)], axis=0)
    mask = _step_mask(b, xs) if b.input(4) is not None else None
    ys, hs, cs = [], [], []
    for di in range(dirs):
        d = b.init(np.int64(di))
        reverse = direction == "reverse" or di == 1
        xd = _reverse(b, x) if reverse else x
        wt = b.op("Transpose", [b.op("Gather", [b.input(1), d], axis=0)], perm=[1, 0])
        rt = b.op("Transpose", [b.op("Gather", [b.input(2), d], axis=0)], perm=[1, 0])
        xw = b.op("MatMul", [xd, wt])  # [seq, batch, 4H]
        bias = None
        if b.input(3):
            bd = b.op("Gather", [b.input(3), d], axis=0)
            bias = b.op("Add", [b.op("Slice", [bd, _i64(b, 0), _i64(b, 4 * H)]),
                                b.op("Slice", [bd, _i64(b, 4 * H), _i64(b, 8 * H)])])
        init = []
        for i in (5, 6):
            s0 = b.input(i)
            if s0 is not None and layout:
                s0 = b.op("Transpose", [s0], perm=[1, 0, 2])
            init.append(b.op("Gather", [s0, d], axis=0) if s0 else
                        b.op("ConstantOfShape", [state_shape],
                             value=helper.make_tensor("z", TensorProto.FLOAT, [1], [0.0])))
        peep = b.op("Gather", [b.input(7), d], axis=0) if b.input(7) else None
        body = lstm_body(b, lambda s, h, rt=rt: s.op("MatMul", [h, rt]), bias, peep, H,
                         names[3 * di:3 * di + 3], _attr(node, "clip"),
                         bool(_attr(node, "input_forget", 0)), masked=mask is not None)
        scanned = [xw] if mask is None else [xw, _reverse(b, mask) if reverse else mask]
        hn, cn, y = b.fresh(), b.fresh(), b.fresh()
        b.nodes.append(helper.make_node("Scan", [*init, *scanned], [hn, cn, y], body=body,
                                        num_scan_inputs=len(scanned)))
        ys.append(_reverse(b, y) if reverse else y)
        hs.append(hn)
        cs.append(cn)
    _outputs(b, node, ys, hs, cs, layout)


def _step_mask(b: _Builder, xs: str) -> str:
    """``[seq, batch]`` bool: step t < the row's ``sequence_lens``."""
    seq = b.op("Squeeze", [b.op("Slice", [xs, _i64(b, 0), _i64(b, 1)]), _i64(b, 0)])
    steps = b.op("Range", [b.init(np.int64(0)), seq, b.init(np.int64(1))])
    lens = b.op("Cast", [b.input(4)], to=TensorProto.INT64)
    return b.op("Less", [b.op("Unsqueeze", [steps, _i64(b, 1)]),
                         b.op("Unsqueeze", [lens, _i64(b, 0)])])


def _outputs(b: _Builder, node: Node, ys, hs, cs, layout: int) -> None:
    zero, one = _i64(b, 0), _i64(b, 1)
    outs = [[b.op("Unsqueeze", [y, one]) for y in ys],
            [b.op("Unsqueeze", [h, zero]) for h in hs],
            [b.op("Unsqueeze", [c, zero]) for c in cs]]
    perms = ([2, 0, 1, 3], [1, 0, 2], [1, 0, 2])
    for k in range(len(node.outputs)):
        if node.outputs[k] is None:
            continue
        if not layout:
            b.op("Concat", outs[k], out=k, axis=1 if k == 0 else 0)
            continue
        joined = b.op("Concat", outs[k], axis=1 if k == 0 else 0)
        b.op("Transpose", [joined], out=k, perm=perms[k])
