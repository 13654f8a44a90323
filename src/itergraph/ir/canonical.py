"""One form per standard op: operands that ONNX later took as inputs are inputs in the IR.

Over its opsets ONNX moved operands from attributes to inputs: ``Slice``'s ranges (opset 10),
``Clip``'s bounds (11), the ``axes`` of ``Squeeze``, ``Unsqueeze`` and ``ReduceSum`` and the
sizes of ``Split`` (13). A file declares one opset, so a reader meets both forms. `canonicalize`
rewrites the older form of these ops into the newer one once, after reading (tract makes ONNX
ops canonical at import the same way), so that passes and analyses read one form and ask no
version: the node's attribute becomes a constant input (an initializer of the graph holding
the node) and its version the first one of that form. The rewrite is exact: for these ops the
newer version means what the older one meant with the operand moved (an absent attribute is
an absent input, and an absent input means what the absent attribute meant). Writers bring
such a node back to the opset the file declared (`READ_AS`) where ONNX's version converter
can (opsets 11 and 12); a file of an older opset holding one of these ops is written at the
opset of the form (10 for ``Slice``, 11 for ``Clip``, 13 for the others).

``Clip`` bounds take the element type of the clipped input, so a ``Clip-6`` whose input type
is unknown keeps its old form; so does any node whose attribute is not a plain list of numbers.

Ops whose older form computes something else (``Softmax`` before 13, the ``broadcast``
attribute before 7, ``BatchNormalization``, ``Dropout``, ``PRelu``) are rewritten in the same
walk by `ir.legacy_forms`.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from .graph import Graph, Node, Value
from .legacy_forms import READ_AS, rewrite_legacy
from .static_values import const_value
from .types import DataType, TensorType


class Moved(NamedTuple):
    attr: str          # the attribute of the older form
    position: int      # the input it becomes
    int64: bool        # an int64 vector (else a scalar of the data input's element type)


class Form(NamedTuple):
    since: int               # the first opset of the form with inputs
    oldest: int              # the first opset whose attribute form `moved` describes
    moved: tuple[Moved, ...]
    back_to: int | None = 11  # the oldest opset ONNX's version converter brings it back to


FORMS: dict[str, Form] = {
    "Slice": Form(10, 1, (Moved("starts", 1, True), Moved("ends", 2, True),
                          Moved("axes", 3, True)), back_to=None),
    "Clip": Form(11, 6, (Moved("min", 1, False), Moved("max", 2, False)), back_to=None),
    "Squeeze": Form(13, 1, (Moved("axes", 1, True),)),
    "Unsqueeze": Form(13, 1, (Moved("axes", 1, True),)),
    "ReduceSum": Form(13, 1, (Moved("axes", 1, True),)),
    "Split": Form(13, 2, (Moved("split", 1, True),)),
}


def canonicalize(graph: Graph) -> int:
    """Rewrite every node of `graph` (subgraphs included) that has an older form of `FORMS`
    into the newer one, in place; returns how many were rewritten."""
    done = 0
    counter = itertools.count(1)
    for owner, node in list(graph.walk()):
        if rewrite_legacy(owner, node, counter):
            done += 1
            continue
        form = FORMS.get(node.op_type)
        if (form is None or node.domain != "" or node.version is None
                or not form.oldest <= node.version < form.since):
            continue
        operands = _operands(node, form)
        if operands is None:
            continue
        inputs = list(node.inputs[:1])
        for m, value in zip(form.moved, operands):
            inputs += [None] * (m.position - len(inputs))
            if value is not None:
                c = Value(f"{node.name or node.op_type}_{m.attr}",
                          TensorType(DataType.from_numpy(value.dtype), value.shape), const=value)
                owner.initializers.append(c)
                inputs.append(c)
        while inputs and inputs[-1] is None:
            inputs.pop()
        node.inputs = inputs
        for m in form.moved:
            node.attrs.pop(m.attr, None)
        if form.back_to is not None and node.version >= form.back_to:
            node.meta.setdefault(READ_AS, node.version)
        node.version = form.since
        done += 1
    return done


def _operands(node: Node, form: Form) -> list[np.ndarray | None] | None:
    """The constant inputs that replace the moved attributes (None: absent), or None when
    the node keeps its form (a value that is not a list of numbers, an unknown input type,
    inputs already where the attributes would go)."""
    if len(node.inputs) != 1 or node.inputs[0] is None:
        return None
    out: list[np.ndarray | None] = []
    for m in form.moved:
        raw = node.attrs.get(m.attr)
        if raw is None:
            out.append(None)
            continue
        try:
            values = np.asarray(raw, dtype=np.float64 if not m.int64 else np.int64)
        except (TypeError, ValueError):
            return None
        if m.int64:
            out.append(values.reshape(-1))
            continue
        t = node.inputs[0].type
        dtype = getattr(getattr(t, "dtype", None), "numpy", None)
        if dtype is None or values.size != 1:
            return None
        out.append(values.reshape(()).astype(dtype))
    return out


def int_operand(node: Node, position: int) -> list[int] | None:
    """The integers of `node`'s input `position` (``axes``, ``split``, ``starts``...) when
    that input is a constant (an initializer or a ``Constant``'s value), else None (absent,
    or known only at run time)."""
    if position >= len(node.inputs) or node.inputs[position] is None:
        return None
    c = const_value(node.inputs[position])
    return None if c is None else [int(a) for a in np.asarray(c).reshape(-1)]
