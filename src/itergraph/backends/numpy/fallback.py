"""Fallback kernels: run any other standard op through ``onnx.reference``.

`fallback_factory(node, ctx)` builds an ONNX ``NodeProto`` from the IR node (attributes typed
by the op's schema), loads the ``onnx.reference`` implementation of the op for the node's
opset version (ops defined as ONNX functions run through their function body, as
``ReferenceEvaluator`` does) and returns a kernel closure over it. Ops that need the input
types to pick their function body are loaded on first call, once per input-type signature.

If ``onnx.reference`` does not know the op either, the factory raises `UnsupportedError`
naming the node, op type, domain and version. Subgraph attributes are written back to ONNX
when they are self-contained (Loop, If, Scan and SequenceMap have native kernels).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import UnsupportedError, where
from ...ir.graph import Graph
from ...ir.types import DataType, OptionalType, SequenceType, TensorType

_DOMAIN_ALIASES = {"ai.onnx": ""}


def fallback_factory(node, ctx):
    """Kernel factory for `node` backed by the ``onnx.reference`` implementation of its op."""
    import onnx

    domain = _DOMAIN_ALIASES.get(node.domain, node.domain)
    version = node.version
    if version is None:
        version = onnx.defs.onnx_opset_version() if domain == "" else 1
    n_in = len(node.inputs)
    while n_in and node.inputs[n_in - 1] is None:
        n_in -= 1
    proto = _node_proto(node, domain, version, n_in)
    run_params = _run_params(domain, version)
    n_out = len(node.outputs)

    def instantiate(input_types=None):
        cls = _load_class(node, proto, domain, version, input_types)
        try:
            return cls(proto, run_params)
        except Exception as e:
            raise UnsupportedError(
                f"{_describe(node, domain, version)}: onnx.reference cannot prepare it: "
                f"{type(e).__name__}: {e}"
            ) from e

    try:
        inst = instantiate()
    except _NeedsTypes:
        inst = None
    by_types: dict[tuple, Any] = {}

    def fn(*args):
        args = args[:n_in]
        op = inst
        if op is None:  # context-dependent function: needs the input types
            key = tuple(_type_key(a) for a in args)
            op = by_types.get(key)
            if op is None:
                op = by_types[key] = instantiate([_type_proto_of(a) for a in args])
        res = op.run(*args)
        outs = [_result(r) for r in res[:n_out]]
        while len(outs) < n_out:
            outs.append(None)
        return outs[0] if n_out == 1 else tuple(outs)

    return fn


class _NeedsTypes(Exception):
    """The op's function body depends on input types not known before the first call."""


def _describe(node, domain: str, version: int) -> str:
    return f"{where(node)} (op '{node.op_type}', domain '{domain}', version {version})"


# ----------------------------------------------------------------------------- loading


def _run_params(domain: str, version: int) -> dict:
    import onnx
    from onnx.reference import ReferenceEvaluator

    opsets = {"": onnx.defs.onnx_opset_version()}
    opsets[domain] = version
    return {
        "log": lambda *a: None,
        "opsets": opsets,
        "verbose": 0,
        "new_ops": None,
        "existing_functions": {},
        "evaluator_cls": ReferenceEvaluator,
    }


def _load_class(node, proto, domain: str, version: int, input_types):
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.op_run import RuntimeContextError

    try:
        if domain == "":
            from onnx.reference.ops import load_op

            if input_types is None:
                return load_op(domain, node.op_type, version, evaluator_cls=ReferenceEvaluator)
            return load_op(domain, node.op_type, version, node=proto, input_types=input_types,
                           evaluator_cls=ReferenceEvaluator)
        if domain == "ai.onnx.ml":
            from onnx.reference.ops.aionnxml import load_op as load_ml

            return load_ml(domain, node.op_type, version)
        if domain == "ai.onnx.preview.training":
            from onnx.reference.ops.aionnx_preview_training import load_op as load_training

            return load_training(domain, node.op_type, version)
        if domain == "ai.onnx.preview":
            from onnx.reference.ops.aionnx_preview import load_op as load_preview

            return load_preview(domain, node.op_type, version)
        if domain == "experimental":
            from onnx.reference.ops.experimental import load_op as load_exp

            return load_exp(domain, node.op_type, version)
    except RuntimeContextError:
        if input_types is None:
            raise _NeedsTypes() from None
        raise UnsupportedError(
            f"{_describe(node, domain, version)}: onnx.reference cannot expand its function"
        ) from None
    except Exception as e:
        raise UnsupportedError(
            f"{_describe(node, domain, version)}: no NumPy kernel, and onnx.reference has no "
            f"implementation ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
        ) from e
    raise UnsupportedError(
        f"{_describe(node, domain, version)}: no NumPy kernel and no onnx.reference "
        f"implementation for this domain"
    )


# ----------------------------------------------------------------------------- NodeProto


def _node_proto(node, domain: str, version: int, n_in: int):
    from onnx import defs, helper

    try:
        schema = defs.get_schema(node.op_type, version, domain)
        schema_attrs = schema.attributes
    except Exception:
        schema_attrs = {}
    attrs = []
    for name, value in node.attrs.items():
        if value is None:
            continue
        if isinstance(value, Graph):
            attrs.append(helper.make_attribute(name, _graph_proto(node, value, domain, version)))
            continue
        if isinstance(value, list) and value and isinstance(value[0], Graph):
            attrs.append(helper.make_attribute(
                name, [_graph_proto(node, g, domain, version) for g in value]))
            continue
        sa = schema_attrs.get(name)
        attrs.append(_attribute(name, value, int(sa.type) if sa is not None else None))
    inputs = ["" if v is None else f"in{i}" for i, v in enumerate(node.inputs[:n_in])]
    outputs = [f"out{i}" for i in range(len(node.outputs))]
    proto = helper.make_node(node.op_type, inputs, outputs, name=node.name or None,
                             domain=domain)
    proto.attribute.extend(attrs)
    return proto


def _graph_proto(node, g: Graph, domain: str, version: int):
    """A self-contained subgraph as a ``GraphProto`` (through the ONNX writer)."""
    if g.captures():
        raise UnsupportedError(
            f"{_describe(node, domain, version)}: its subgraph '{g.name}' uses outer values; "
            f"the onnx.reference fallback only runs self-contained subgraphs"
        )
    from ...frontends.onnx import write

    versions = [n.version for _, n in g.walk() if n.domain == "" and n.version]
    tmp = Graph(g.name, g.inputs, g.outputs, g.nodes, g.initializers,
                opset_imports={"": max(versions, default=version if domain == "" else 1)})
    return write(tmp).graph


def _attribute(name: str, value: Any, attr_type: int | None):
    from onnx import AttributeProto as A
    from onnx import helper, numpy_helper

    if isinstance(value, (TensorType, SequenceType, OptionalType)):
        return helper.make_attribute(name, type_proto(value), attr_type=A.TYPE_PROTO)
    if attr_type == A.FLOAT:
        value = float(np.asarray(value).reshape(-1)[0]) if not np.isscalar(value) else float(value)
    elif attr_type == A.INT:
        value = int(np.asarray(value).reshape(-1)[0]) if not np.isscalar(value) else int(value)
    elif attr_type == A.FLOATS:
        value = [float(v) for v in np.asarray(value, dtype=np.float64).reshape(-1)]
    elif attr_type == A.INTS:
        value = [int(v) for v in np.asarray(value, dtype=np.int64).reshape(-1)]
    elif attr_type == A.STRINGS:
        value = [v if isinstance(v, (str, bytes)) else str(v) for v in value]
    elif attr_type == A.TENSOR:
        value = numpy_helper.from_array(np.asarray(value))
    elif attr_type == A.TENSORS:
        value = [numpy_helper.from_array(np.asarray(v)) for v in value]
    elif isinstance(value, np.ndarray):
        value = numpy_helper.from_array(value)
    return helper.make_attribute(name, value, attr_type=attr_type)


def _elem_type(dtype) -> int:
    from onnx import TensorProto, helper

    dt = np.dtype(dtype)
    if dt.kind in "OUS":
        return TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(dt)


def type_proto(t):
    """An ONNX ``TypeProto`` for an IR type."""
    from onnx import TypeProto, helper

    if isinstance(t, TensorType):
        elem = 0 if t.dtype is None else _elem_type(DataType(t.dtype).numpy)
        return helper.make_tensor_type_proto(elem, None if t.shape is None else list(t.shape))
    if isinstance(t, SequenceType):
        return helper.make_sequence_type_proto(
            type_proto(t.elem) if t.elem is not None else TypeProto()
        )
    if isinstance(t, OptionalType):
        return helper.make_optional_type_proto(
            type_proto(t.elem) if t.elem is not None else TypeProto()
        )
    raise TypeError(f"not an IR type: {t!r}")


# ----------------------------------------------------------------------------- run-time values


def _type_key(a) -> tuple:
    if isinstance(a, list):
        return ("seq",) + (_type_key(a[0]) if a else ())
    if a is None:
        return ("none",)
    return (str(a.dtype), a.ndim)


def _type_proto_of(a):
    from onnx import TypeProto, helper

    if isinstance(a, list):
        return helper.make_sequence_type_proto(_type_proto_of(a[0]) if a else TypeProto())
    if a is None:
        return TypeProto()
    return helper.make_tensor_type_proto(_elem_type(a.dtype), list(a.shape))


def _result(r):
    if r is None or isinstance(r, (list, np.ndarray)):
        return r
    return np.asarray(r)
