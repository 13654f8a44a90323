"""One form per standard op: operands that ONNX later took as inputs are inputs in the IR.

Over its opsets ONNX moved operands from attributes to inputs: ``Reshape``'s target shape
(opset 5), ``TopK``'s ``k`` (10), ``Slice``'s ranges (10), ``Clip``'s bounds and ``Pad``'s
widths and fill value (11), the ``axes`` of ``Squeeze``, ``Unsqueeze`` and ``ReduceSum`` and the
sizes of ``Split`` (13), the ``axes`` of the other reductions (18). A file declares one opset,
so a reader meets both forms. `canonicalize` rewrites the older form of these ops into the
newer one once, after reading (tract makes ONNX ops canonical at import the same way), so that
passes, analyses and kernels read one form and ask no version: the node's attribute becomes a
constant input (an initializer of the graph holding the node) and its version the first one of
that form. The rewrite is exact: for these ops the newer version means what the older one
meant with the operand moved (an absent attribute is an absent input, and an absent input
means what the absent attribute meant; ``Pad``-1 calls its widths ``paddings``; ``Split``-1
may already take its sizes as an input). Writers bring such a node back to the opset the file
declared (`READ_AS`) where ONNX's version converter can (`Form.back_to`); a file of an older
opset holding one of these ops is written at the opset of the form.

A scalar operand (``Clip``'s bounds, ``Pad``'s fill value) takes the element type of the data
input: a constant of that type, or, where the type is unknown until run time, a float32
constant ``CastLike`` the input (the attribute's own precision, so the same value). A node
whose attribute is not a plain list of numbers keeps its form (the kernels refuse it).

Ops whose older form computes something else (``Softmax`` before 13, the ``broadcast``
attribute before 7, ``BatchNormalization``, ``Dropout``, ``PRelu``) are rewritten in the same
walk by `ir.legacy_forms`.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from ..errors import where
from .builder import Builder
from .graph import Graph, Node
from .legacy_forms import READ_AS, rewrite_legacy
from .static_values import const_value
from .traits import Trait, ops_with
from .types import TensorType


class Moved(NamedTuple):
    attr: str          # the attribute of the older form
    position: int      # the input it becomes
    int64: bool        # an int64 vector (else a scalar of the data input's element type)
    alias: str = ""    # the attribute's name in the oldest versions, where it had another


class Form(NamedTuple):
    since: int               # the first opset of the form with inputs
    moved: tuple[Moved, ...]
    back_to: int | None = 11  # the oldest opset ONNX's version converter brings it back to


_AXES = (Moved("axes", 1, True),)
#: the reductions whose ``axes`` became an input at opset 18 (``ReduceSum``: at 13)
REDUCE_18 = tuple(sorted(ops_with(Trait.REDUCTION) - {"ReduceSum"}))

FORMS: dict[str, Form] = {
    "Reshape": Form(5, (Moved("shape", 1, True),), back_to=None),
    "TopK": Form(10, (Moved("k", 1, True),), back_to=None),
    "Slice": Form(10, (Moved("starts", 1, True), Moved("ends", 2, True),
                       Moved("axes", 3, True)), back_to=None),
    "Clip": Form(11, (Moved("min", 1, False), Moved("max", 2, False)), back_to=None),
    "Pad": Form(11, (Moved("pads", 1, True, alias="paddings"), Moved("value", 2, False)),
                back_to=None),
    "Squeeze": Form(13, _AXES),
    "Unsqueeze": Form(13, _AXES),
    "ReduceSum": Form(13, _AXES),
    "Split": Form(13, (Moved("split", 1, True),)),
    **{op: Form(18, _AXES, back_to=13) for op in REDUCE_18},
}
#: attributes of older forms that meant nothing to the result (an optimisation hint of opsets
#: before 6): dropped with the rewrite
_HINTS = ("consumed_inputs",)


def canonicalize(graph: Graph) -> int:
    """Rewrite every node of `graph` (subgraphs included) that has an older form of `FORMS`
    or of `ir.legacy_forms` into the newer one, in place; returns how many were rewritten."""
    done = 0
    counter = itertools.count(1)
    for owner, node in list(graph.walk()):
        if rewrite_legacy(owner, node, counter) or _rewrite_form(owner, node, counter):
            done += 1
    return done


def _rewrite_form(owner: Graph, node: Node, counter) -> bool:
    form = FORMS.get(node.op_type)
    if (form is None or node.domain != "" or node.version is None
            or node.version >= form.since):
        return False
    operands = _operands(node, form)
    if operands is None:
        return False
    b = Builder(owner, node.name or node.op_type.lower(), "/", counter=counter)
    inputs = list(node.inputs[:1]) if operands else list(node.inputs)
    for m, (value, cast) in zip(form.moved, operands):
        inputs += [None] * (m.position - len(inputs))
        if value is not None:
            c = b.const(value, name=f"{node.name or node.op_type}_{m.attr}")
            inputs.append(b.node("CastLike", [c, inputs[0]], version=15,
                                 type=TensorType(None, ())) if cast else c)
    while inputs and inputs[-1] is None:
        inputs.pop()
    node.inputs = inputs
    for name in (*(a for m in form.moved for a in (m.attr, m.alias) if a), *_HINTS):
        node.attrs.pop(name, None)
    if form.back_to is not None and node.version >= form.back_to:
        node.meta.setdefault(READ_AS, node.version)
    node.version = form.since
    at = next(k for k, n in enumerate(owner.nodes) if n is node)
    owner.nodes[at:at] = b.nodes
    return True


def _operands(node: Node, form: Form) -> list[tuple[np.ndarray | None, bool]] | None:
    """(the constant input that replaces each moved attribute (None: absent), whether it is
    cast like the data input at run time), or None when the node keeps its form (a value
    that is not a list of numbers, a moved attribute beside inputs); [] when the node has its
    operands as inputs already (``Split``-1)."""
    present = [m for m in form.moved if node.attrs.get(m.attr, node.attrs.get(m.alias))
               is not None]
    if not node.inputs or node.inputs[0] is None or (len(node.inputs) > 1 and present):
        return None
    if len(node.inputs) > 1:
        return []
    out: list[tuple[np.ndarray | None, bool]] = []
    for m in form.moved:
        raw = node.attrs.get(m.attr, node.attrs.get(m.alias))
        if raw is None:
            out.append((None, False))
            continue
        try:
            values = np.asarray(raw, dtype=np.float64 if not m.int64 else np.int64)
        except (TypeError, ValueError):
            return None
        if m.int64:
            out.append((values.reshape(-1), False))
            continue
        if values.size != 1:
            return None
        dtype = getattr(getattr(node.inputs[0].type, "dtype", None), "numpy", None)
        out.append((values.reshape(()).astype(dtype or np.float32), dtype is None))
    return out


def not_canonical(node: Node, attr: str) -> str:
    """The error message for a node that kept an older form's attribute `attr` (a graph built
    by hand, or an attribute that is not a list of numbers)."""
    since = FORMS[node.op_type].since
    return (f"{where(node)}: '{attr}' is an attribute, as in opsets before {since}; the IR "
            "takes it as an input (models read from files are rewritten so: ir.canonical)")


def int_operand(node: Node, position: int) -> list[int] | None:
    """The integers of `node`'s input `position` (``axes``, ``split``, ``starts``...) when
    that input is a constant (an initializer or a ``Constant``'s value), else None (absent,
    or known only at run time)."""
    if position >= len(node.inputs) or node.inputs[position] is None:
        return None
    c = const_value(node.inputs[position])
    return None if c is None else [int(a) for a in np.asarray(c).reshape(-1)]
