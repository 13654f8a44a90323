"""The default ONNX exporter: one IR `Node` becomes one ``NodeProto`` of the same op.

A default-domain node read under another opset than the model's is brought to the model's
opset by :mod:`.versioning` (then it may become several nodes). Graph attributes (``If``
branches among them) are written as subgraphs in the node's scope. Ops of the ``itergraph``
domain other than the canonical loop have no ONNX form.

Every exporter takes ``(w, n, env, nodes)``: the model's `Writer` (which names values and
writes subgraphs), the IR node, the `Env` its names are defined in, and the list of
``NodeProto`` it appends to.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ...errors import UnsupportedError
from ...ir.graph import MICROSOFT_DOMAIN, Node, Value
from ...ir.operands import vector_operands
from ...ir.static_values import const_value
from .attributes import attr_to_onnx
from .export_common import declarable, rank_of
from .naming import Env
from .types import tensor_to_onnx, type_to_onnx
from .versioning import adapt, unchanged


def emit_node(w, n: Node, env: Env, nodes: list[onnx.NodeProto]) -> None:
    """Append the ONNX form of `n` to `nodes` (the entry for every op without one of its own)."""
    if n.domain == "itergraph":
        raise UnsupportedError(f"{n.op_type} node '{n.name}': itergraph-domain op has no "
                               "ONNX form")
    user = f"{n.op_type} node '{n.name or '<unnamed>'}'"
    ins = ["" if v is None else w.name(env, v, user) for v in n.inputs]
    consts = {nm: _const_of(v) for nm, v in zip(ins, n.inputs) if v is not None}
    vectors = set()
    # OpenVINO takes a scalar wherever one axis, count or ``k`` is meant, and the IR keeps
    # such nodes as read; ONNX Runtime refuses scalars where ONNX declares a vector ("An axes
    # tensor must be a vector tensor"): a scalar, or a value of unknown rank, is reshaped to
    # [-1], a constant written as a vector constant.
    for i in vector_operands(n.op_type) if n.domain == "" else ():
        if i < len(ins) and ins[i] and rank_of(n.inputs[i]) != 1:
            ins[i] = _as_vector(w, ins[i], consts, nodes)
            vectors.add(ins[i])
    version = n.version if n.version is not None else (w.opset if n.domain == "" else None)
    attrs = [attr_to_onnx(k, val, attr_kind(n, k, version or w.opset),
                          lambda sg: w.graph(sg, env, keep_names=n.domain == MICROSOFT_DOMAIN))
             for k, val in n.attrs.items()]
    outs = [w.define(env, v) for v in n.outputs]
    proto = helper.make_node(n.op_type, ins, outs, name=w.node_names.fresh(n.name or n.op_type),
                             domain=n.domain or None)
    proto.attribute.extend(attrs)
    if n.domain == "" and not unchanged(n.op_type, "", version, w.opset):
        types = {nm: type_to_onnx(v.type) for nm, v in zip(ins, n.inputs)
                 if v is not None and declarable(v.type) and nm not in vectors}
        nodes.extend(adapt(proto, version, w.opset, types, w.fresh,
                           {k: c for k, c in consts.items() if c is not None},
                           node_name=w.node_names.fresh))
    elif n.domain == "":
        nodes.append(proto)
    else:
        if version is not None:
            w.domains[n.domain] = max(w.domains.get(n.domain, 0), version)
        nodes.append(proto)


def _as_vector(w, name: str, consts: dict, nodes: list[onnx.NodeProto]) -> str:
    """`name` (a scalar, or of unknown rank) as a vector: a new constant when its value is
    known (kept in `consts` for the opset conversion), else a ``Reshape`` to ``[-1]``."""
    out = w.fresh(f"{name}_vec")
    c = consts.get(name)
    if c is not None:
        arr = numpy_helper.to_array(c).reshape(-1)
        consts[out] = numpy_helper.from_array(arr, out)
        nodes.append(helper.make_node("Constant", [], [out], name=w.node_names.fresh("Constant"),
                                      value=numpy_helper.from_array(arr)))
        return out
    shape = w.fresh("shape_1")
    nodes.append(helper.make_node("Constant", [], [shape], name=w.node_names.fresh("Constant"),
                                  value=numpy_helper.from_array(np.array([-1], np.int64))))
    nodes.append(helper.make_node("Reshape", [name, shape], [out],
                                  name=w.node_names.fresh("Reshape")))
    return out


def attr_kind(n: Node, name: str, version: int) -> int | None:
    """The ONNX kind of attribute `name` of `n`: from the op's schema at opset `version`, else
    the kind remembered when reading, else ``None`` (inferred from the value)."""
    try:
        schema = onnx.defs.get_schema(n.op_type, version, n.domain)
        a = schema.attributes.get(name)
        if a is not None and int(a.type) != 0:
            return int(a.type)
    except onnx.defs.SchemaError:
        pass
    return n.meta.get("onnx_attr_types", {}).get(name)


def _const_of(v: Value) -> onnx.TensorProto | None:
    """The constant value of `v` (an initializer or a ``Constant`` output), if it has one."""
    c = const_value(v)
    return None if c is None else tensor_to_onnx(c)
