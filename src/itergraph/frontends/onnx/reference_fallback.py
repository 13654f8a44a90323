"""Running a standard op through ``onnx.reference``: the NumPy kernels' default for ONNX ops.

The NumPy backend has native kernels for most ops; `itergraph` registers `fallback_factory`
as the default factory of its kernel table for the ONNX domains (``""``/``ai.onnx``,
``ai.onnx.ml`` and the preview domains), so every other op of those domains runs here.

`fallback_factory(node, ctx)` builds an ONNX ``NodeProto`` from the IR node (attributes typed
by the op's schema), loads the ``onnx.reference`` implementation of the op for the node's
opset version (ops defined as ONNX functions run through their function body, as
``ReferenceEvaluator`` does) and returns a kernel closure over it. Ops that need the input
types to pick their function body are loaded on first call, once per input-type signature.

Where ``onnx.reference`` accepts inputs that the op's specification (and ONNX Runtime)
refuses, and would compute a silently wrong result from them (a negative ``k`` of TopK gives
empty outputs), `_INPUT_CHECKS` refuses them first with an `ExecutionError` naming the node
and input, as the JAX backend does.

If ``onnx.reference`` does not know the op either, the factory raises `UnsupportedError`
naming the node, op type, domain and version. Subgraph attributes are written back to ONNX
when they are self-contained (Loop, If, Scan and SequenceMap have native kernels).
Attributes, types and subgraphs are written by this package's own writers (`attributes`,
`types`, `writer`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import ExecutionError, UnsupportedError, where
from ...ir.graph import Graph
from ...ir.types import DataType, SequenceType, TensorType
from .attributes import attr_to_onnx
from .types import type_to_onnx
from .writer import write

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
    check = _INPUT_CHECKS.get((domain, node.op_type))
    # ai.onnx.ml ops whose schema fixes an output's type (TreeEnsembleRegressor's float Y)
    # that onnx.reference gives in another (float64 from int32 features): given that type
    fixed = [_fixed_dtype(v) if domain == "ai.onnx.ml" else None for v in node.outputs]

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
        if check is not None:
            check(node, args)
        op = inst
        if op is None:  # context-dependent function: needs the input types
            key = tuple(_type_key(a) for a in args)
            op = by_types.get(key)
            if op is None:
                op = by_types[key] = instantiate([type_to_onnx(_type_of(a)) for a in args])
        res = op.run(*args)
        outs = [_result(r) for r in res[:n_out]]
        for k, dt in enumerate(fixed[:len(outs)]):
            if dt is not None and isinstance(outs[k], np.ndarray) and outs[k].dtype != dt:
                outs[k] = outs[k].astype(dt)
        while len(outs) < n_out:
            outs.append(None)
        return outs[0] if n_out == 1 else tuple(outs)

    return fn


def _fixed_dtype(v) -> np.dtype | None:
    """The numeric NumPy dtype of output `v` where its type is known (else None)."""
    t = v.type if v is not None else None
    if not isinstance(t, TensorType) or t.dtype is None:
        return None
    dt = np.dtype(t.dtype.numpy)
    return dt if dt.kind in "fiub" else None


class _NeedsTypes(Exception):
    """The op's function body depends on input types not known before the first call."""


def _describe(node, domain: str, version: int) -> str:
    return f"{where(node)} (op '{node.op_type}', domain '{domain}', version {version})"


# ----------------------------------------------------------------------------- input checks


def _check_topk(node, args) -> None:
    """TopK: ``k`` (attribute before opset 10, else input 1: one integer) within
    ``[0, length of the axis]``, the axis within the rank."""
    x = np.asarray(args[0])
    axis = int(node.attrs.get("axis", -1) if node.attrs.get("axis") is not None else -1)
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise ExecutionError(f"{where(node)}: axis {axis} out of range for rank {x.ndim}")
    if len(args) > 1:
        k = np.asarray(args[1])
        if k.size != 1 or k.dtype.kind not in "iu":
            raise ExecutionError(f"{where(node)}: k (input 1) must be one integer, got "
                                 f"{k.dtype} of shape {list(k.shape)}")
        k, what = int(k.reshape(-1)[0]), "k (input 1)"
    else:
        k, what = int(node.attrs.get("k", -1)), "attribute k"
    length = x.shape[axis] if x.ndim else 1
    if not 0 <= k <= length:
        raise ExecutionError(f"{where(node)}: {what}={k} out of range for axis length "
                             f"{length}")


def _check_compress(node, args) -> None:
    """Compress: the axis, where given, within the rank (``np.compress`` reads -2**31 as no
    axis and flattens)."""
    axis, rank = node.attrs.get("axis"), np.ndim(args[0])
    if axis is not None and not -rank <= int(axis) < rank:
        raise ExecutionError(f"{where(node)}: axis {int(axis)} out of range for rank {rank}")


_INPUT_CHECKS = {("", "TopK"): _check_topk, ("", "Compress"): _check_compress}


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
        schema_attrs = defs.get_schema(node.op_type, version, domain).attributes
    except Exception:
        schema_attrs = {}

    def subgraph(g: Graph):
        return _graph_proto(node, g, domain, version)

    attrs = []
    for name, value in node.attrs.items():
        if value is None:
            continue
        sa = schema_attrs.get(name)
        attrs.append(attr_to_onnx(name, value, int(sa.type) if sa is not None else None,
                                  subgraph))
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
    versions = [n.version for _, n in g.walk() if n.domain == "" and n.version]
    tmp = Graph(g.name, g.inputs, g.outputs, g.nodes, g.initializers,
                opset_imports={"": max(versions, default=version if domain == "" else 1)})
    return write(tmp).graph


# ----------------------------------------------------------------------------- run-time values


def _type_key(a) -> tuple:
    if isinstance(a, list):
        return ("seq",) + (_type_key(a[0]) if a else ())
    if a is None:
        return ("none",)
    return (str(a.dtype), a.ndim)


def _type_of(a):
    """The IR type of a run-time value (a tensor, a sequence, or ``None``: unknown)."""
    if isinstance(a, list):
        return SequenceType(_type_of(a[0]) if a else None)
    if a is None:
        return None
    return TensorType(DataType.from_numpy(a.dtype), tuple(a.shape))


def _result(r):
    if r is None or isinstance(r, (list, np.ndarray)):
        return r
    return np.asarray(r)
