"""The table of ONNX node importers and the walk over a graph's nodes that uses it."""

from __future__ import annotations

import onnx
from onnx import numpy_helper

from ...errors import Error
from ...ir.defaults import defaults
from ...ir.graph import canonical_domain
from ..core import Tensor
from .errors import ErrorCode, ImportFailure, NodeFailure, ParserError, fail, node_name

IMPORTERS: dict = {}


def importer(*names):
    def deco(fn):
        for n in names:
            IMPORTERS[n] = fn
        return fn

    return deco


# -- the graph walk ---------------------------------------------------------------------------

def attributes(node, opset: int, base_dir: str = "") -> dict:
    """`node`'s attributes as Python values, with the scalar defaults of those it leaves out
    (its schema's at `opset`, `ir.defaults`; a list default such as ``RNN``'s two
    ``activations`` depends on other attributes, so its importer decides)."""
    out = {k: v for k, v in defaults("", node.op_type, opset).items()
           if isinstance(v, (int, float, str))}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        if a.type == onnx.AttributeProto.TENSOR:
            v = numpy_helper.to_array(v, base_dir)
        elif isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [x.decode("utf-8", "replace") for x in v]
        out[a.name] = v
    return out


def import_graph(ctx, graph, layer_outputs: dict | None = None) -> None:
    """Register `graph`'s initializers and import its nodes in order into the current scope;
    the first failing node raises `ImportFailure`."""
    for init in graph.initializer:
        ctx.put(init.name, numpy_helper.to_array(init, ctx.base_dir))
    for idx, node in enumerate(graph.node):
        saved = ctx.node, ctx.layer_count
        ctx.node, ctx.layer_count = node, 0
        try:
            if canonical_domain(node.domain) != "":
                fail(ErrorCode.UNSUPPORTED_NODE, f"No importer registered for op: {node.op_type} "
                     f"(domain '{node.domain}')")
            fn = IMPORTERS.get(node.op_type)
            if fn is None:
                fail(ErrorCode.UNSUPPORTED_NODE, f"No importer registered for op: {node.op_type}")
            inputs = [ctx.get(n) if n else None for n in node.input]
            outs = fn(ctx, node, inputs, attributes(node, ctx.opset, ctx.base_dir))
        except ImportFailure as f:
            e = f.error
            raise ImportFailure(ParserError(
                e.code(), f"{e.desc()} [in the subgraph of node {idx} '{node_name(node)}' "
                f"({node.op_type})]", e.node(), e.node_name(), e.node_operator(),
                e.func())) from None
        except NodeFailure as e:
            raise ImportFailure(ParserError(e.code, str(e), idx, node_name(node), node.op_type,
                                            f"import{node.op_type}")) from None
        except Error as e:  # a network-API refusal while building the node's layers
            raise ImportFailure(ParserError(ErrorCode.INVALID_NODE, str(e), idx,
                                            node_name(node), node.op_type,
                                            f"import{node.op_type}")) from None
        finally:
            ctx.node, ctx.layer_count = saved
        for name, v in zip(node.output, outs):
            if name:
                ctx.put(name, v)
        if layer_outputs is not None:
            layer_outputs[node_name(node)] = [v for v in outs if isinstance(v, Tensor)]


__all__ = ["IMPORTERS", "attributes", "import_graph", "importer"]
