"""IR `Graph` -> ONNX ``ModelProto``.

Each node is written by its entry in :mod:`.export_table`: regular nodes map one to one
(:mod:`.node_export`; a node read under another opset than the model's is brought to it by
:mod:`.versioning`); canonical loops are lowered by :mod:`.loop_export` to ``Scan`` when their
form allows it and to ``Loop`` otherwise.

Names: data flow in the IR is by reference, so the writer names every value itself. Names are
unique across the whole model (SSA over all scopes). The main graph's inputs and outputs keep
their names (a later clash is renamed instead); other values keep theirs where free, else get
a ``_k`` suffix; unnamed values get one made up.

Opset: ``opset`` if given, else the largest of the graph's ``opset_imports[""]``, the
versions of its default-domain nodes, and what the loop lowerings need (9 for Scan, 11 for
a Loop with sliced inputs or other rewritten features).
"""

from __future__ import annotations

from typing import Any

import onnx
from onnx import helper

from ...errors import ModelError, UnsupportedError, writing
from ...ir.canonical import READ_AS
from ...ir.graph import Graph, Node, Value
from ...ir.loop import Loop
from ...ir.types import TensorType
from ...passes.pipelines import rewritten_copy
from ...passes.state_io import state_io
from .export_common import declarable, ordered, output_type, value_info
from .export_table import exporter_for
from .loop_export import required_opset
from .naming import Env, Namer
from .types import tensor_to_onnx

DEFAULT_OPSET = 21


def _declared_type(v: Value):
    """`v`'s IR type, or for a loop output without one (or without its rank) what the loop's
    ports tell."""
    known = isinstance(v.type, TensorType) and v.type.shape is not None
    if not known and isinstance(v.producer, Loop):
        t = output_type(v.producer, v.producer.output_ports[v.index])
        if v.type is None or isinstance(t, TensorType) and t.shape is not None:
            return t
    return v.type


class Writer:
    def __init__(self, opset: int):
        self.opset = opset
        self.namer = Namer()
        self.node_names = Namer()
        self.reserved: dict[int, str] = {}
        self.domains: dict[str, int] = {}
        self.inferred: dict[str, Value] = {}  # name -> value whose type inference wrote

    # naming ---------------------------------------------------------------------------------

    def fresh(self, hint: str = "") -> str:
        return self.namer.fresh(hint)

    def define(self, env: Env, v: Value, hint: str | None = None) -> str:
        name = self.reserved.pop(v.uid, None) or self.fresh(hint or v.name or "v")
        env.names[v.uid] = name
        if v.meta.get("value_info"):
            self.inferred[name] = v
        return name

    def name(self, env: Env, v: Value, user: str) -> str:
        n = env.lookup(v)
        if n is None:
            raise ModelError(f"{user}: value '{v.name or v.uid}' is used but not defined in "
                             "this scope or an enclosing one")
        return n

    # graphs ---------------------------------------------------------------------------------

    def main(self, g: Graph) -> onnx.GraphProto:
        for v in g.inputs:
            if v.name:
                self.reserved[v.uid] = self.namer.fresh(v.name)
        for v in g.outputs:
            if v.name and v.uid not in self.reserved:
                self.reserved[v.uid] = self.namer.fresh(v.name)
        return self.graph(g, None, top=True)

    def graph(self, g: Graph, parent: Env | None, top: bool = False,
              keep_names: bool = False) -> onnx.GraphProto:
        """The ONNX form of `g`. With `keep_names` its inputs and outputs keep their names even
        where they shadow outer ones: ONNX Runtime's contrib ops (``GreedySearch``, ...) check
        the names of their subgraphs' inputs and outputs."""
        env = Env(parent)
        if keep_names:
            for v in [*g.inputs, *g.outputs]:
                if v.name and v.uid not in self.reserved and v.const is None:
                    self.reserved[v.uid] = v.name
                    self.namer.used.add(v.name)
        nodes: list[onnx.NodeProto] = []
        inputs = [value_info(self.define(env, v), v.type, shape=True) for v in g.inputs]
        inits = [tensor_to_onnx(v.const, self.define(env, v)) for v in g.initializers]
        for n in ordered(g):
            self.node(n, env, nodes)
        outputs = self.outputs(nodes, inits, [(self.name(env, v, f"graph '{g.name}'"),
                                               _declared_type(v), v.name) for v in g.outputs],
                               top=top)
        return helper.make_graph(nodes, g.name or ("main" if top else self.fresh("subgraph")),
                                 inputs, outputs, inits)

    def outputs(self, nodes: list, inits: list, outs: list[tuple[str, Any, str]],
                top: bool = False) -> list[onnx.ValueInfoProto]:
        """Output value infos for ``(name, IR type, hint)`` triples of one graph.

        In a subgraph an output that is not computed in it (a graph input or an outer value),
        and anywhere an output listed twice, is copied with ``Identity`` so that every output
        has its own name."""
        local = {t.name for t in inits} | {o for n in nodes for o in n.output}
        seen: set[str] = set()
        infos = []
        for name, t, hint in outs:
            if name in seen or not (top or name in local):
                new = self.fresh(hint or name)
                nodes.append(helper.make_node("Identity", [name], [new],
                                              name=self.node_names.fresh("Identity_out")))
                name = new
            seen.add(name)
            infos.append(value_info(name, t))
        return infos

    # nodes ----------------------------------------------------------------------------------

    def node(self, n: Node, env: Env, nodes: list[onnx.NodeProto]) -> None:
        """Append the ONNX form of `n` to `nodes`, as its entry in :mod:`.export_table` says."""
        with writing(n, "ONNX"):
            exporter_for(n)(self, n, env, nodes)


def _declare_inferred(gp: onnx.GraphProto, inferred: dict[str, Value]) -> None:
    """Add to `gp` and its subgraphs a ``value_info`` for each node output named after a value
    whose type shape inference wrote (``meta["value_info"]``, see `shapes.infer_shapes`),
    unless it is an input or output of that graph."""
    taken = {vi.name for vi in [*gp.input, *gp.output, *gp.value_info]}
    for n in gp.node:
        for o in n.output:
            v = inferred.get(o)
            if v is not None and o not in taken and declarable(v.type):
                gp.value_info.append(value_info(o, v.type))
                taken.add(o)
        for a in n.attribute:
            for g in [a.g] if a.HasField("g") else list(a.graphs):
                _declare_inferred(g, inferred)


def target_opset(graph: Graph, opset: int | None) -> int:
    need = max((required_opset(loop) for _, loop in graph.walk() if isinstance(loop, Loop)),
               default=1)
    known = onnx.defs.onnx_opset_version()
    if opset is not None:
        if opset < need:
            raise UnsupportedError(f"the graph's loops need ONNX opset {need} or newer to be "
                                   f"written; opset {opset} was asked for")
        if opset > known:
            raise UnsupportedError(f"onnx {onnx.__version__} knows opsets up to {known}, "
                                   f"not {opset}")
        return opset
    versions = [n.meta.get(READ_AS, n.version) for _, n in graph.walk()
                if n.domain == "" and n.version is not None and not isinstance(n, Loop)]
    base = graph.opset_imports.get("")
    cands = [v for v in [base, *versions] if v]
    return min(max([*cands, need]) if cands else max(DEFAULT_OPSET, need), known)


def write(graph: Graph, opset: int | None = None, *, producer_name: str = "itergraph",
          ir_version: int | None = None) -> onnx.ModelProto:
    """Write `graph` (an IR main graph) as an ONNX model at default-domain opset `opset`.
    ONNX has no state: variables become inputs and outputs (`passes.state_io`)."""
    graph = rewritten_copy((state_io,), graph)
    target = target_opset(graph, opset)
    w = Writer(target)
    gp = w.main(graph)
    domains = {d: v for d, v in graph.opset_imports.items() if d not in ("", "itergraph")}
    for d, v in w.domains.items():
        domains[d] = max(domains.get(d, 0), v)
    opsets = [helper.make_opsetid("", target)]
    opsets += [helper.make_opsetid(d, v) for d, v in sorted(domains.items())]
    model = helper.make_model(gp, opset_imports=opsets, producer_name=producer_name)
    model.ir_version = ir_version or max(
        helper.find_min_ir_version_for(opsets, ignore_unknown=True), 7)
    _meta(model, graph.meta)
    _fill_main_types(model)
    _declare_inferred(model.graph, w.inferred)
    return model


def _meta(model: onnx.ModelProto, meta: dict[str, Any]) -> None:
    props = meta.get("metadata_props") or {}
    if props:
        helper.set_model_props(model, dict(props))
    if meta.get("doc_string"):
        model.doc_string = meta["doc_string"]


def _incomplete(vi: onnx.ValueInfoProto) -> bool:
    if not vi.HasField("type"):
        return True
    return vi.type.HasField("tensor_type") and not vi.type.tensor_type.HasField("shape")


def _fill_main_types(model: onnx.ModelProto) -> None:
    """Complete main-graph inputs and outputs whose type (or tensor shape) is unknown with
    what ONNX shape inference finds (the checker wants both on the main graph)."""
    vis = list(model.graph.input) + list(model.graph.output)
    if not any(_incomplete(vi) for vi in vis):
        return
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    keep = [vi for vi in probe.graph.output if not _incomplete(vi)]
    del probe.graph.output[:]
    probe.graph.output.extend(keep)  # incomplete outputs then show up in value_info
    try:
        inferred = onnx.shape_inference.infer_shapes(probe, strict_mode=False)
    except Exception:  # noqa: BLE001
        return
    found = {vi.name: vi.type for vi in [*inferred.graph.value_info, *inferred.graph.output,
                                        *inferred.graph.input] if not _incomplete(vi)}
    for vi in vis:
        if _incomplete(vi) and vi.name in found:
            vi.type.CopyFrom(found[vi.name])
