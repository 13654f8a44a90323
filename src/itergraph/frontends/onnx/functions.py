"""Model-local functions (``ModelProto.functions``), expanded at each call while reading.

A node whose (domain, op_type, overload) names a function of the model is a call: the reader
converts the function's body in place of the node. The body is read

- with the function's own opset imports (a node's IR ``version`` is the opset of its domain
  there; a domain the function does not import is an error, as in ONNX Runtime), so one graph
  may mix nodes of several opsets;
- in a scope of its own (`Scope` without a parent: a body sees only its formal inputs), where
  each formal input is bound to the call's value, or is absent when the call omits it (the body
  then reads it as an omitted optional input);
- with each attribute reference (``ref_attr_name``) replaced by the call's attribute of that
  name, else by the function's default (``attribute_proto``), else dropped (the attribute is
  then not given), in the body and in every subgraph of it;
- with fresh value and node names (``<call>/<name>``), so that several calls of one function
  never collide;
- with the call's output values produced by the body nodes that compute the formal outputs
  (an ``Identity`` when a formal output is not computed by a body node: a formal input passed
  through, or a value bound to two outputs; ONNX Runtime refuses both). Formal outputs the call
  omits (an empty name, or fewer outputs than declared, which ONNX Runtime refuses) stay
  internal.

Calls inside a body (functions calling functions, calls in an ``If`` or ``Loop`` body inside a
function) expand the same way when the reader reaches them. Refused with a `ModelError`: two
functions with one (domain, name, overload), a function that calls itself (directly or
through others), a call of a function the model does not define in a domain that only holds
model-local functions, a call with more inputs or outputs than the function declares, a
formal output the body never defines, and calls that expand to more than
`MAX_EXPANDED_NODES` nodes in all (functions that call others several times nest
exponentially; the size is counted before anything is expanded).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import onnx

from ...errors import Error, ModelError
from ...ir.graph import Node, Value
from .naming import Namer
from .node_import import DEFAULT_DOMAINS, where
from .scope import Scope
from .types import type_from_onnx

Key = tuple[str, str, str]  # domain (IR spelling), name, overload

MAX_EXPANDED_NODES = 1_000_000


def _key(domain: str, name: str, overload: str) -> Key:
    return ("" if domain in DEFAULT_DOMAINS else domain, name, overload)


def _show(key: Key) -> str:
    domain, name, overload = key
    return f"'{name}'" + (f" (overload '{overload}')" if overload else "") + \
        f" of domain '{domain}'"


@dataclass
class Call:
    """One call being expanded: what its body's nodes resolve against."""

    key: Key
    label: str  # prefix of the names of the values and nodes of this expansion
    opsets: dict[str, int]
    chain: tuple[Key, ...]  # the functions being expanded, outermost first, this one last


@dataclass
class Functions:
    """The model's functions by (domain, name, overload)."""

    by_key: dict[Key, onnx.FunctionProto] = field(default_factory=dict)
    namer: Namer = field(default_factory=Namer)
    expanded: int = 0  # nodes that the calls expanded so far give, nested calls included
    _sizes: dict[Key, int] = field(default_factory=dict)

    @classmethod
    def of(cls, protos: Iterable[onnx.FunctionProto]) -> Functions:
        fs = cls()
        for f in protos:
            key = _key(f.domain, f.name, f.overload)
            if key in fs.by_key:
                raise ModelError(f"the model defines function {_show(key)} twice")
            fs.by_key[key] = f
        return fs

    def called_by(self, p: onnx.NodeProto) -> onnx.FunctionProto | None:
        """The function node `p` calls, if it is a call; a `ModelError` when `p` calls a function
        that is not defined in a domain that holds only model-local functions."""
        if not self.by_key:
            return None
        key = _key(p.domain, p.op_type, p.overload)
        f = self.by_key.get(key)
        if f is not None:
            return f
        domain = key[0]
        if domain in {k[0] for k in self.by_key} and not onnx.defs.has(p.op_type, p.domain):
            defined = sorted(_show(k) for k in self.by_key if k[0] == domain)
            raise ModelError(f"{where(p)} calls function {_show(key)}, which the model does not "
                             f"define (it defines {', '.join(defined)})")
        return None

    def size(self, key: Key) -> int:
        """How many nodes a call of function `key` expands to, nested calls and subgraphs
        included (a cycle counts nothing here; its expansion refuses it)."""
        if key not in self._sizes:
            self._sizes[key] = 0
            self._sizes[key] = self._count(self.by_key[key].node)
        return self._sizes[key]

    def _count(self, nodes: Iterable[onnx.NodeProto]) -> int:
        total = 0
        for n in nodes:
            key = _key(n.domain, n.op_type, n.overload)
            total += self.size(key) if key in self.by_key else 1
            for a in n.attribute:
                for g in _graphs(a):
                    total += self._count(g.node)
        return total


def _graphs(a: onnx.AttributeProto) -> list[onnx.GraphProto]:
    return ([a.g] if a.HasField("g") else []) + list(a.graphs)


def _refers(p: onnx.NodeProto) -> bool:
    """Whether `p` or a node of its subgraphs refers to a function attribute."""
    return any(a.ref_attr_name or any(_refers(n) for g in _graphs(a) for n in g.node)
               for a in p.attribute)


def _bind(p: onnx.NodeProto, key: Key, attrs: dict[str, onnx.AttributeProto]) -> onnx.NodeProto:
    """A copy of `p` with its attribute references, at every depth of its subgraphs, replaced
    by `attrs` (the call's attributes over the function's defaults); `p` itself when it has
    none."""
    if not _refers(p):
        return p
    q = onnx.NodeProto()
    q.CopyFrom(p)
    del q.attribute[:]
    for a in p.attribute:
        if a.ref_attr_name:
            src = attrs.get(a.ref_attr_name)
            if src is None:
                continue  # neither the call nor a default gives it: the attribute is not set
            if a.type and src.type != a.type:
                kind = onnx.AttributeProto.AttributeType.Name
                raise ModelError(
                    f"{where(p)}: attribute '{a.name}' refers to attribute '{a.ref_attr_name}' "
                    f"of function {_show(key)}, which the call gives as {kind(src.type)}, not "
                    f"{kind(a.type)}")
            b = q.attribute.add()
            b.CopyFrom(src)
            b.name = a.name
            continue
        b = q.attribute.add()
        b.CopyFrom(a)
        for g in _graphs(b):
            nodes = [_bind(n, key, attrs) for n in g.node]
            del g.node[:]
            g.node.extend(nodes)
    return q


def expand_call(r, p: onnx.NodeProto, f: onnx.FunctionProto, scope: Scope,
                outputs: list[Value]) -> list[Node]:
    """The nodes of `f`'s body that compute call `p`, read by `r` (the model's `Reader`);
    `outputs` are the call's declared outputs."""
    key = _key(f.domain, f.name, f.overload)
    outer = scope.call
    chain = (outer.chain if outer is not None else ()) + (key,)
    if key in chain[:-1]:
        path = " -> ".join(k[1] for k in chain[chain.index(key):])
        raise ModelError(f"{where(p)}: function {_show(key)} calls itself ({path}); "
                         "a model-local function cannot be recursive")
    if len(p.input) > len(f.input) or len(p.output) > len(f.output):
        raise ModelError(f"{where(p)}: the call has {len(p.input)} inputs and {len(p.output)} "
                         f"outputs; function {_show(key)} takes at most {len(f.input)} inputs "
                         f"and gives at most {len(f.output)} outputs")
    if outer is None:  # the outermost call of a nest: counts the calls inside it too
        r.functions.expanded += r.functions.size(key)
        if r.functions.expanded > MAX_EXPANDED_NODES:
            raise ModelError(f"{where(p)}: expanding the model's function calls gives more "
                             f"than {MAX_EXPANDED_NODES} nodes ({r.functions.expanded} so far); "
                             "refused as too large")
    inputs = r.resolve(p, scope)
    label = r.functions.namer.fresh(
        (outer.label + "/" if outer is not None else "") + (p.name or f.name))
    call = Call(key, label, _opsets(f), chain)
    attrs = {a.name: a for a in f.attribute_proto}
    attrs.update((a.name, a) for a in p.attribute)
    body_nodes = [_bind(n, key, attrs) for n in f.node]
    types = {vi.name: vi.type for vi in f.value_info}
    body = Scope(f.name, None, call=call, label=f"function {_show(key)}")
    for i, formal in enumerate(f.input):
        body.define(formal, inputs[i] if i < len(inputs) else None, "formal input")
    wanted: dict[str, Value] = {}  # formal output -> the call's value a body node computes
    copies: list[tuple[str, Value]] = []  # formal outputs no body node computes: an Identity
    for i, formal in enumerate(f.output):
        if i < len(p.output) and p.output[i]:
            if formal in wanted or formal in f.input:
                copies.append((formal, outputs[i]))
            else:
                wanted[formal] = outputs[i]
    declared = []
    for bp in body_nodes:
        outs = []
        for o in bp.output:
            v = wanted.pop(o, None)
            if v is None:
                v = Value(f"{label}/{o}" if o else "", type_from_onnx(types.get(o)) if o else None)
            if o:
                body.define(o, v, f"output of {where(bp)}")
            outs.append(v)
        declared.append(outs)
    nodes: list[Node] = []
    try:
        for bp, outs in zip(body_nodes, declared):
            nodes.extend(r.convert(bp, body, outs))
    except Error as e:
        raise type(e)(f"{where(p)}: in function {_show(key)}: {e}") from e
    for formal, v in [*wanted.items(), *copies]:
        src = body.lookup(formal)
        if src is None:
            raise ModelError(f"{where(p)}: function {_show(key)} never defines its output "
                             f"'{formal}'")
        nodes.append(Node("Identity", [src], [v], domain="",
                          version=call.opsets.get("", onnx.defs.onnx_opset_version()),
                          name=f"{label}/{formal}"))
    return nodes


def _opsets(f: onnx.FunctionProto) -> dict[str, int]:
    return {("" if o.domain in DEFAULT_DOMAINS else o.domain): int(o.version)
            for o in f.opset_import}
