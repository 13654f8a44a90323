"""The default ONNX importer: one ``NodeProto`` becomes one IR `Node` of the same op.

Attributes are converted by :mod:`.attributes` (graph attributes, ``If`` branches among them,
become IR subgraphs read in the node's scope); the ONNX attribute kinds are kept in
``node.meta["onnx_attr_types"]`` so that the writer can give ambiguous values (an empty list)
the same kind again.

Every importer takes ``(r, p, scope, inputs, outputs, version)``: the model's `Reader` (which
converts subgraphs and attributes), the ``NodeProto``, the `Scope` its names resolve in, its
resolved inputs (``None`` for an empty name), the values already declared for its outputs, and
the opset version its domain is imported at.
"""

from __future__ import annotations

import onnx

from ...ir.graph import Node, Value
from .scope import Scope

DEFAULT_DOMAINS = ("", "ai.onnx")


def where(p: onnx.NodeProto) -> str:
    """How error messages name node `p`."""
    return f"{p.op_type} node '{p.name or '<unnamed>'}'"


def domain_of(p: onnx.NodeProto) -> str:
    """`p`'s domain as the IR spells it (``""`` for the default domain)."""
    return "" if p.domain in DEFAULT_DOMAINS else p.domain


def import_node(r, p: onnx.NodeProto, scope: Scope, inputs: list[Value | None],
                outputs: list[Value], version: int) -> Node:
    """`p` as an ordinary IR node (the entry for every op without one of its own)."""
    attrs, kinds = r.attrs(p, scope)
    n = Node(p.op_type, inputs, outputs, attrs, domain=domain_of(p), version=version,
             name=p.name)
    n.meta["onnx_attr_types"] = kinds
    if p.doc_string:
        n.meta["doc_string"] = p.doc_string
    return n
