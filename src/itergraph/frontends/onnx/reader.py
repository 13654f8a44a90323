"""ONNX ModelProto -> IR `Graph`.

`read` accepts a ``ModelProto``, a path, or serialized bytes. Every graph is converted with
ONNX scoping (see :mod:`.scope`): outer names become direct references to the outer `Value`
objects. Value types are those the file states (graph inputs and outputs, ``value_info``);
ONNX shape inference is not run (it aborts the process on some malformed nodes). Every node
gets ``version`` = the opset its domain is imported at. A call of a model-local function is
replaced by the function's body, read with the function's own opset imports
(:mod:`.functions`).
Each node is converted by its entry in :mod:`.import_table` (op, domain and version):
``Loop`` and ``Scan`` become the canonical `itergraph.ir.Loop` (:mod:`.loop_import`,
:mod:`.scan_import`); everything else, ``If`` included, becomes an ordinary `Node` whose graph
attributes are IR graphs (:mod:`.node_import`).

An initializer that is also listed as a graph input (IR version < 4 style) is read as an
initializer (a constant); its name is kept in ``graph.meta["overridable_initializers"]``.

Refused with a `ModelError` (an `UnsupportedError` for what is merely too new): an empty or
unparsable file, an ``ir_version`` below 1 or above what the installed onnx knows, a graph
without outputs, and any standard node that breaks its schema (:mod:`.schema_check`). External
data is read per tensor, from regular files inside the model's directory only (`types`).
"""

from __future__ import annotations

import os
from typing import Any

import onnx

from ...errors import InputError, ModelError, UnsupportedError
from ...ir.canonical import canonicalize
from ...ir.graph import MICROSOFT_DOMAIN, Graph, Node, Value
from ...ir.traversal import toposort
from ...ir.types import TensorType
from ...ir.verifier import verify
from .attributes import attr_from_onnx
from .functions import Functions, expand_call
from .import_table import importer_for
from .node_import import DEFAULT_DOMAINS, domain_of, where
from .schema_check import check_node, type_string
from .scope import Scope
from .text_fields import as_text, check_graph_text, check_node_text
from .types import (
    dtype_from_onnx,
    sparse_from_onnx,
    tensor_from_onnx,
    value_type_from_onnx,
)


class UnsupportedOpsetError(ModelError, UnsupportedError):
    """The model imports an opset this reader does not know (both a model and support error)."""


def _load(model: Any) -> tuple[onnx.ModelProto, str]:
    if isinstance(model, onnx.ModelProto):
        return model, ""
    if isinstance(model, bytes | bytearray | memoryview):
        return _parse(bytes(model), "ONNX model bytes"), ""
    if isinstance(model, str | os.PathLike):
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ModelError(f"cannot read ONNX model '{path}': {e.strerror}") from None
        # external data is read per tensor, where its location is checked (`types`)
        return _parse(data, f"ONNX model '{path}'"), os.path.dirname(os.path.abspath(path))
    raise InputError(f"read() expects a ModelProto, a path or bytes, not {type(model).__name__}")


def _parse(data: bytes, what: str) -> onnx.ModelProto:
    if not data:
        raise ModelError(f"cannot parse {what}: it is empty")
    try:
        return onnx.load_from_string(data)
    except Exception as e:  # noqa: BLE001 - protobuf DecodeError and friends
        raise ModelError(f"cannot parse {what}: {e}") from e


def _check_ir_version(proto: onnx.ModelProto) -> None:
    ir = int(proto.ir_version)
    if ir < 1:
        raise ModelError(f"the model's ir_version {ir} is not valid: an ONNX model states the "
                         "IR version it was written for (1 or more)")
    if ir > onnx.IR_VERSION:
        raise UnsupportedError(f"the model's ir_version {ir} is newer than this reader knows "
                               f"(onnx {onnx.__version__} reads up to {onnx.IR_VERSION})")


def _opsets(proto: onnx.ModelProto) -> dict[str, int]:
    _check_ir_version(proto)
    opsets: dict[str, int] = {}
    for o in proto.opset_import:
        dom = "" if o.domain in DEFAULT_DOMAINS else o.domain
        opsets[dom] = int(o.version)
    if not opsets and proto.ir_version < 3:
        opsets[""] = 1  # IR versions before 3 had no opset imports: opset 1 implied
    known = onnx.defs.onnx_opset_version()
    if "" in opsets and not 1 <= opsets[""] <= known:
        raise UnsupportedOpsetError(
            f"model imports ONNX opset {opsets['']}; this reader knows opsets 1 to {known} "
            f"(onnx {onnx.__version__})"
        )
    return opsets


def read(model: onnx.ModelProto | str | os.PathLike | bytes) -> Graph:
    """Convert an ONNX model to an IR graph (the main graph, with ``opset_imports`` set)."""
    proto, base_dir = _load(model)
    opsets = _opsets(proto)
    if not proto.graph.output:
        raise ModelError(f"the model's graph '{proto.graph.name}' has no outputs")
    reader = Reader(opsets, base_dir, Functions.of(proto.functions))
    g = reader.graph(proto.graph, None)
    g.opset_imports = dict(opsets)
    canonicalize(g)
    g.meta.update(ir_version=int(proto.ir_version), producer_name=as_text(proto.producer_name),
                  producer_version=as_text(proto.producer_version),
                  domain=as_text(proto.domain), model_version=int(proto.model_version),
                  doc_string=as_text(proto.doc_string),
                  metadata_props={as_text(p.key): as_text(p.value)
                                  for p in proto.metadata_props})
    verify(g)
    return g


class Reader:
    """Converts graphs and nodes; holds what every graph of one model shares."""

    def __init__(self, opsets: dict[str, int], base_dir: str = "",
                 functions: Functions | None = None):
        self.opsets = opsets
        self.base_dir = base_dir
        self.functions = functions or Functions()

    # graphs --------------------------------------------------------------------------------

    def graph(self, gp: onnx.GraphProto, parent: Scope | None) -> Graph:
        """Convert `gp`; names it does not define resolve in `parent` (captures)."""
        check_graph_text(gp)
        name = gp.name
        scope = Scope(name, parent)
        types = {vi.name: vi.type for vi in gp.value_info}
        types.update((vi.name, vi.type) for vi in gp.output)
        g = Graph(name)
        init_names = {t.name for t in gp.initializer} | {t.values.name
                                                         for t in gp.sparse_initializer}
        overridable = []
        declared_inits: dict = {}  # an input that is an initializer: its declared type
        for vi in gp.input:
            if not vi.name:
                raise ModelError(f"graph '{name}': an input has an empty name")
            if vi.name in init_names:
                overridable.append(vi.name)
                declared_inits[vi.name] = value_type_from_onnx(vi.type, vi.name)
                continue
            v = Value(vi.name, value_type_from_onnx(vi.type, vi.name))
            scope.define(vi.name, v, "graph input")
            g.inputs.append(v)
        if overridable:
            g.meta["overridable_initializers"] = overridable
        for t in gp.initializer:
            self._initializer(g, scope, t.name, tensor_from_onnx(t, self.base_dir))
        for st in gp.sparse_initializer:
            self._initializer(g, scope, st.values.name, sparse_from_onnx(st, self.base_dir))
        for v in g.initializers:
            _check_initializer_declared(name, v, declared_inits.get(v.name))
        # Declare every node output first so that a graph out of topological order still reads.
        declared: list[list[Value]] = []
        for p in gp.node:
            outs = []
            for o in p.output:
                v = Value(o, value_type_from_onnx(types.get(o), o) if o else None)
                if o:
                    scope.define(o, v, f"output of {where(p)}")
                outs.append(v)
            declared.append(outs)
        for p, outs in zip(gp.node, declared):
            g.nodes.extend(self.convert(p, scope, outs))
        for vi in gp.output:
            v = scope.lookup(vi.name)
            if v is None:
                raise ModelError(f"graph '{name}': output '{vi.name}' is not defined")
            if v.type is None:
                v.type = value_type_from_onnx(vi.type, vi.name)
            g.outputs.append(v)
        toposort(g)
        return g

    def _initializer(self, g: Graph, scope: Scope, name: str, array) -> None:
        try:
            dt = dtype_from_onnx(onnx.helper.np_dtype_to_tensor_dtype(array.dtype))
        except Exception:  # noqa: BLE001 - no ONNX element type for this NumPy dtype
            dt = None
        t = TensorType(dt, tuple(array.shape))
        v = Value(name, t, const=array)
        scope.define(name, v, "initializer")
        g.initializers.append(v)

    # nodes ---------------------------------------------------------------------------------

    def convert(self, p: onnx.NodeProto, scope: Scope, outputs: list[Value]) -> list[Node]:
        """The IR nodes of `p`: one node, or the expanded body of a model-local function."""
        check_node_text(p)
        call = scope.call
        f = self.functions.called_by(p)
        if f is not None:
            self.version_of(p, scope)  # the call's domain is imported, as ONNX Runtime requires
            return expand_call(self, p, f, scope, outputs)
        n = self.node(p, scope, outputs)
        if call is not None:  # unique across calls of one function
            n.name = f"{call.label}/{p.name or p.op_type}"
        return [n]

    def version_of(self, p: onnx.NodeProto, scope: Scope | None = None) -> int:
        """The opset `p`'s domain is imported at: the model's, or in a function body the
        function's."""
        call = scope.call if scope is not None else None
        opsets = call.opsets if call is not None else self.opsets
        dom = domain_of(p)
        if dom not in opsets and dom == MICROSOFT_DOMAIN:
            return 1  # ONNX Runtime accepts its contrib ops without an opset_import entry
        if dom not in opsets:
            whose = "the model" if call is None else "its function"
            raise ModelError(f"{where(p)}: domain '{p.domain}' is not imported by {whose} "
                             "(no opset_import entry)")
        return opsets[dom]

    def resolve(self, p: onnx.NodeProto, scope: Scope) -> list[Value | None]:
        ins: list[Value | None] = []
        for i, n in enumerate(p.input):
            if not n:
                ins.append(None)
                continue
            found, v = scope.find(n)
            if v is None:
                if found:  # a formal input the function call omits
                    ins.append(None)
                    continue
                raise ModelError(f"{where(p)} in {scope.label}: input {i} '{n}' is "
                                 "not defined (no graph input, initializer, node output or outer "
                                 "value has that name)")
            ins.append(v)
        return ins

    def attrs(self, p: onnx.NodeProto, scope: Scope) -> tuple[dict[str, Any], dict[str, int]]:
        vals: dict[str, Any] = {}
        kinds: dict[str, int] = {}
        for a in p.attribute:
            try:
                vals[a.name] = attr_from_onnx(a, lambda gp: self.graph(gp, scope), self.base_dir)
            except ModelError as e:
                raise ModelError(f"{where(p)}: attribute '{a.name}': {e}") from e
            kinds[a.name] = int(a.type)
        return vals, kinds

    def node(self, p: onnx.NodeProto, scope: Scope, outputs: list[Value]) -> Node:
        version = self.version_of(p, scope)
        inputs = self.resolve(p, scope)
        check_node(p, version, inputs, outputs)
        convert = importer_for(p.op_type, version, domain_of(p))
        return convert(self, p, scope, inputs, outputs, version)

    @staticmethod
    def since(p: onnx.NodeProto, version: int) -> int:
        """The version of `p`'s operator schema in effect at opset `version`."""
        try:
            return onnx.defs.get_schema(p.op_type, version, "").since_version
        except onnx.defs.SchemaError:
            raise UnsupportedOpsetError(f"{where(p)}: onnx {onnx.__version__} has no schema "
                                        f"of {p.op_type} for opset {version}") from None

    def body(self, p: onnx.NodeProto, scope: Scope) -> Graph:
        """The ``body`` graph attribute of a Loop/Scan node, converted in `scope`."""
        for a in p.attribute:
            if a.name == "body":
                if a.type != onnx.AttributeProto.GRAPH:
                    raise ModelError(f"{where(p)}: attribute 'body' must be a graph")
                return self.graph(a.g, scope)
        raise ModelError(f"{where(p)}: required attribute 'body' is missing")

    def int_attrs(self, p: onnx.NodeProto) -> dict[str, Any]:
        """The non-graph attributes of `p` (ints and lists of ints), by name."""
        out: dict[str, Any] = {}
        for a in p.attribute:
            if a.type == onnx.AttributeProto.INT:
                out[a.name] = int(a.i)
            elif a.type == onnx.AttributeProto.INTS:
                out[a.name] = [int(x) for x in a.ints]
        return out


def _check_initializer_declared(graph: str, v: Value, declared) -> None:
    """A graph input that is also an initializer (a default a feed may override) declared of
    another element type than the initializer holds, or declared a sequence, optional or map
    (an initializer is a tensor): ONNX Runtime refuses both at load."""
    if declared is not None and not isinstance(declared, TensorType):
        raise ModelError(f"graph '{graph}': input '{v.name}' is declared "
                         f"{type_string(declared) or type(declared).__name__} but its "
                         f"initializer holds {type_string(v.type)}")
    if declared is None or declared.dtype is None:
        return
    if v.type.dtype is not None and declared.dtype != v.type.dtype:
        raise ModelError(f"graph '{graph}': input '{v.name}' is declared "
                         f"{type_string(declared)} but its initializer holds "
                         f"{type_string(v.type)}")
