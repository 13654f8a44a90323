"""The body that ONNX's own schema gives an operator defined as a function.

Many newer standard operators (``LayerNormalization``, ``RMSNormalization``, ``Attention``,
``RotaryEmbedding``, ``Swish``, ``MeanVarianceNormalization``, ``CenterCropPad``,
``AffineGrid``, the loss operators, ...) are defined by ONNX as a *function* of older ones:
either one body for every use (``OpSchema.function_body``), or a body built for the node's
attributes and input types (a context-dependent function). `expansion(node)` gives that body
for one IR node as an IR graph whose inputs are the node's present inputs, in order, and whose
outputs are its outputs: a writer that cannot express the operator itself writes these nodes
instead, and the file computes what the operator computes by ONNX's definition.

The body is read by the ONNX reader as a model-local function called once, so its nodes carry
the function's own opset imports and fresh names.
"""

from __future__ import annotations

import onnx

from ...errors import UnsupportedError, where
from ...ir.graph import Graph, Node
from .attributes import attr_to_onnx
from .node_export import attr_kind
from .types import type_to_onnx

#: the domain the call of the schema's body is written in (a model-local function's domain)
_CALL_DOMAIN = "itergraph.schema_function"


def _schema(node: Node) -> onnx.defs.OpSchema | None:
    if node.domain not in ("", "ai.onnx") or not node.version:
        return None
    try:
        return onnx.defs.get_schema(node.op_type, node.version, "")
    except onnx.defs.SchemaError:
        return None


def _no_subgraph(g):
    raise UnsupportedError("an operator defined as a function takes no graph attribute")


def _call(node: Node, schema: onnx.defs.OpSchema, names_in: list[str],
          names_out: list[str]) -> onnx.NodeProto:
    """The call, with every attribute the node omits given its schema default (a body refers
    to attributes by name and does not know the defaults)."""
    attrs = [attr_to_onnx(k, v, attr_kind(node, k, node.version), _no_subgraph)
             for k, v in node.attrs.items()]
    for name, a in schema.attributes.items():
        if name not in node.attrs and a.default_value.type:
            attrs.append(a.default_value)
    p = onnx.helper.make_node(node.op_type, names_in, names_out, name=node.name or "")
    p.attribute.extend(attrs)
    return p


def _function(node: Node, schema: onnx.defs.OpSchema, call: onnx.NodeProto) -> onnx.FunctionProto:
    f = onnx.FunctionProto()
    if schema.has_function:
        f.CopyFrom(schema.function_body)
        return f
    types = [type_to_onnx(v.type if v is not None else None).SerializeToString()
             for v in node.inputs]
    try:
        f.ParseFromString(schema.get_context_dependent_function(call.SerializeToString(), types))
    except Exception as e:  # onnx raises its own C++ errors for a node it cannot build a body of
        raise UnsupportedError(f"{where(node)}: ONNX's definition of {node.op_type} as a "
                               f"function cannot be built for this node: {e}") from None
    return f


def expansion(node: Node) -> Graph | None:
    """`node` as the nodes of ONNX's function body for it (an IR graph: inputs are the node's
    present inputs in order, outputs its outputs); ``None`` when ONNX defines the operator
    directly. An `UnsupportedError` when ONNX cannot build the body for this node."""
    from .reader import read  # the reader imports this module's siblings

    schema = _schema(node)
    if schema is None or not (schema.has_function or schema.has_context_dependent_function):
        return None
    names_in = [f"in{i}" if v is not None else "" for i, v in enumerate(node.inputs)]
    names_out = [f"out{i}" for i in range(len(node.outputs))]
    call = _call(node, schema, names_in, names_out)
    f = _function(node, schema, call)
    call.domain = f.domain = _CALL_DOMAIN
    f.name = node.op_type
    opsets = {o.domain: o.version for o in f.opset_import}
    opsets.setdefault("", node.version)
    opsets[_CALL_DOMAIN] = 1
    graph = onnx.helper.make_graph(
        [call], f"{node.op_type}_function",
        [onnx.helper.make_value_info(n, type_to_onnx(v.type))
         for n, v in zip(names_in, node.inputs) if v is not None],
        [onnx.helper.make_value_info(n, onnx.TypeProto()) for n in names_out])
    model = onnx.helper.make_model(
        graph, functions=[f],
        opset_imports=[onnx.helper.make_opsetid(d, v) for d, v in opsets.items()])
    model.ir_version = 10
    return read(model)
