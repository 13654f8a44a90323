"""Carried layout: a loop carries a tall-and-thin rank-2 state transposed (long axis last).

A recurrent state ``h`` of static shape ``[a, b]`` with a small ``b`` (``b <= MAX_SHORT`` and
``a >= RATIO * b``, e.g. a Mamba scan state ``[d_inner, d_state]``) puts the short axis last,
which vectorises badly on XLA's CPU backend. This pass makes the loop carry ``h^T`` (``[b, a]``)
instead, and has the body compute in that layout:

- the Carried port's initial value becomes ``Transpose(init)`` (a node before the loop);
- every body value computed from the state ("transposed values", the parameter included) holds
  the transpose of what it held before (its declared type is swapped as well), by rewriting its
  producer in place:

  * element-wise ops (``Add``, ``Mul``, ``Exp``, ``Where``, ...) with broadcasting: each other
    operand is replaced by its transpose as seen from a rank-2 result: rank 0 stays, rank 1
    (``[n]``, broadcast as ``[1, n]``) becomes ``Unsqueeze(x, [1])`` (``[n, 1]``), rank 2 becomes
    a transposed copy, built by pulling the transpose up through the element-wise ops and
    ``Unsqueeze``-of-a-vector nodes that produce it (so a per-step ``exp(Δ_t[:, None] A)`` is
    computed as ``exp(Δ_t[None, :] A^T)`` with a loop-invariant ``A^T``), else an explicit
    ``Transpose`` (loop-invariant ones are hoisted by the backends);
  * ``Reduce*`` over constant axes: the axes are remapped (``i -> 1 - i``); with
    ``keepdims=0`` the rank-0/1 result is the same as before and is no transposed value;
  * ``MatMul(X, Y)`` of rank-2 operands: ``(X Y)^T = MatMul(Y^T, X^T)``;
  * ``Transpose`` (rank 2) of a transposed value becomes ``Identity`` (no transposed value);
- loop outputs (``Last``, ``Concat``) of transposed values get a new loop output followed by
  the inverse ``Transpose`` (a node after the loop) that defines the original output value, so
  readers of the loop's outputs see exactly what they saw before.
"""

from __future__ import annotations

from ..ir.attributes import attr_or_default
from ..ir.builder import Builder
from ..ir.canonical import int_operand
from ..ir.graph import Graph, Node, Value
from ..ir.loop import Carried, Concat, Loop
from ..ir.traits import ELEMENTWISE, Trait, traits
from ..ir.types import TensorType
from .base import Pass
from .loop_motion import LoopScope, body_value_uses, const_value, is_pure, static_shape

MAX_SHORT = 32  # the short axis is at most this long ...
RATIO = 4  # ... and the long axis at least this many times longer
PULL_DEPTH = 6  # how far a transpose of a non-state operand is pulled up through its producers


class CarriedLayout(Pass):
    """A loop carries a tall-and-thin rank-2 state transposed (long axis last).

    Applies to: every ``Carried`` port of every canonical `Loop` at any depth whose state has
    a static shape ``[a, b]`` with ``b <= MAX_SHORT`` and ``a >= RATIO * b``, all or
    nothing: a port is rewritten (as the module docstring describes) only if the state's
    carried result is a transposed value and every read of a transposed value can be
    rewritten (not: other ops, a nested subgraph's capture, another carried port's result, a
    condition).

    Returns: the number of carried ports rewritten.

    Guarantees: readers of the loop's outputs see what they saw before: results are the same
    up to the rounding of reordered sums (a reduction or matrix product over the other axis).
    """

    name = "carried_layout"
    in_place = True

    def __call__(self, graph: Graph) -> int:
        count = 0
        for g, node in list(graph.walk()):
            if isinstance(node, Loop):
                for port in list(node.carried):
                    plan = _plan(node, port)
                    if plan is not None:
                        _Rewriter(g, node, port, plan).apply()
                        count += 1
        return count

    def applicable(self, graph: Graph) -> bool:
        return any(isinstance(n, Loop) and any(_plan(n, p) is not None for p in n.carried)
                   for _, n in graph.walk())


carried_layout = CarriedLayout()


# ----------------------------------------------------------------------------- helpers






def _rank(v: Value | None, depth: int = 0) -> int | None:
    """The rank of `v` if the IR tells it (declared type, constant, or a few producers)."""
    if v is None:
        return None
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None:
        return len(t.shape)
    c = const_value(v)
    if c is not None:
        return c.ndim
    p = v.producer
    if p is None or p.domain != "" or depth > 24 or isinstance(p, Loop):
        return None
    op = p.op_type
    if traits(op) & ELEMENTWISE:
        ranks = [_rank(x, depth + 1) for x in p.inputs if x is not None]
        return None if not ranks or None in ranks else max(ranks)
    if op == "Gather" and len(p.inputs) == 2:
        r, q = _rank(p.inputs[0], depth + 1), _rank(p.inputs[1], depth + 1)
        return None if r is None or q is None else r + q - 1
    if op == "Unsqueeze":
        r, axes = _rank(p.inputs[0], depth + 1), int_operand(p, 1)
        return None if r is None or axes is None else r + len(axes)
    if op == "Transpose":
        return _rank(p.inputs[0], depth + 1)
    return None


def _reduce_axes(n: Node) -> tuple[list[int] | None, str]:
    """(axes, where they are: "input" or "none"); axes None when not constant."""
    if len(n.inputs) > 1 and n.inputs[1] is not None:
        c = const_value(n.inputs[1])
        return (None if c is None else [int(a) for a in c.reshape(-1)]), "input"
    return [], "none"


def _swapped(t):
    if isinstance(t, TensorType) and t.shape is not None and len(t.shape) == 2:
        return TensorType(t.dtype, (t.shape[1], t.shape[0]))
    return None


def _transposed_type(t):
    """The type of a transposed rank-2 value whose old type was `t`."""
    if isinstance(t, TensorType) and (t.shape is None or len(t.shape) != 2):
        return TensorType(t.dtype, None)
    return _swapped(t) if isinstance(t, TensorType) else t


# ----------------------------------------------------------------------------- analysis


def _plan(loop: Loop, port: Carried) -> dict | None:
    """How to rewrite `port` of `loop`: {"t": uids of transposed values, "actions": node id ->
    action}, or None when the port does not qualify or a use cannot be rewritten."""
    shape = static_shape(port.param) or static_shape(port.value)
    if shape is None or len(shape) != 2:
        return None
    a, b = shape
    if not (0 < b <= MAX_SHORT and a >= RATIO * b):
        return None
    if port.result is port.param:
        return None
    body = loop.body
    t: set[int] = {port.param.uid}
    actions: dict[int, str] = {}
    for n in body.nodes:
        reads_t = any(v is not None and v.uid in t for v in n.inputs)
        if any(v.uid in t for g in n.subgraphs() for v in g.captures()):
            return None
        if not reads_t:
            continue
        act = _action(n, t)
        if act is None:
            return None
        actions[id(n)] = act
        if act in ("elementwise", "matmul", "reduce_keep"):
            t.add(n.outputs[0].uid)
    if port.result.uid not in t:
        return None
    for c in loop.carried:
        if c is not port and c.result.uid in t:
            return None
    for v in (loop.condition_result, loop.precondition):
        if v is not None and v.uid in t:
            return None
    return {"t": t, "actions": actions}


def _action(n: Node, t: set[int]) -> str | None:
    """What to do with node `n`, which reads a transposed value; None: cannot."""
    if n.domain != "" or isinstance(n, Loop) or n.subgraphs() or len(n.outputs) != 1:
        return None
    op = n.op_type
    if traits(op) & ELEMENTWISE:
        for v in n.inputs:
            if v is not None and v.uid not in t:
                r = _rank(v)
                if r is None or r > 2:
                    return None
        return "elementwise"
    if Trait.REDUCTION in traits(op):
        if n.inputs[0] is None or n.inputs[0].uid not in t or any(
                v is not None and v.uid in t for v in n.inputs[1:]):
            return None
        axes, _ = _reduce_axes(n)
        if axes is None or any(not -2 <= x < 2 for x in axes):
            return None
        if not axes and attr_or_default(n, "noop_with_empty_axes"):
            return None
        if attr_or_default(n, "keepdims"):
            return "reduce_keep"
        return "reduce_drop"
    if op == "MatMul" and len(n.inputs) == 2 and None not in n.inputs:
        if all(v.uid in t or _rank(v) == 2 for v in n.inputs):
            return "matmul"
        return None
    if op == "Transpose" and n.inputs[0].uid in t:
        perm = n.attrs.get("perm")
        if perm is None or [int(p) for p in perm] == [1, 0]:
            return "untranspose"
    return None


# ----------------------------------------------------------------------------- rewriting


class _Rewriter:
    def __init__(self, graph: Graph, loop: Loop, port: Carried, plan: dict):
        self.graph, self.loop, self.port = graph, loop, port
        self.t: set[int] = plan["t"]
        self.actions: dict[int, str] = plan["actions"]
        self.body = loop.body
        self.scope = LoopScope(loop)
        self.made: dict[int, Value] = {}  # uid -> its transposed copy (non-transposed values)
        # new body nodes, placed before the node being rewritten
        self.b = Builder(self.body, "")
        self.rewritten: set[int] = set()  # ids of nodes rewritten in place

    # -- constants and new nodes
    def _i64(self, name: str, values) -> Value:
        return self.b.i64(values, name=name)

    def _node(self, op: str, inputs, name: str, attrs=None, version: int | None = 13,
              out_type=None) -> Value:
        return self.b.add(op, inputs, [Value(name, out_type)], attrs, version=version,
                          name=f"{name}_layout").outputs[0]

    # -- the transpose of a value that is not a transposed value, as a rank-2 operand sees it
    def to_t(self, v: Value | None, depth: int = 0) -> Value | None:
        if v is None or v.uid in self.t:
            return v
        r = _rank(v)
        if r == 0:
            return v
        got = self.made.get(v.uid)
        if got is not None:
            return got
        if r == 1:
            out = self._node("Unsqueeze", [v, self._i64(f"{v.name}_ax1", [1])], f"{v.name}_T")
        else:
            out = self._pull(v, depth)
        self.made[v.uid] = out
        return out

    def _pull(self, v: Value, depth: int) -> Value:
        p = v.producer
        name = f"{v.name}_T"
        typ = _swapped(v.type)
        if (p is not None and not self.scope.is_invariant(v) and p.domain == ""
                and id(p) not in self.rewritten and depth < PULL_DEPTH and len(p.outputs) == 1
                and not p.subgraphs()):
            if p.op_type == "Unsqueeze" and _rank(p.inputs[0]) == 1:
                axes = int_operand(p, 1)
                if axes is not None and len(axes) == 1:
                    ax = 1 if axes[0] % 2 == 0 else 0
                    return self._node("Unsqueeze", [p.inputs[0], self._i64(f"{name}_ax", [ax])],
                                      name, out_type=typ)
            if traits(p.op_type, p.domain) & ELEMENTWISE and all(
                    x is None or (_rank(x) is not None and _rank(x) <= 2) for x in p.inputs):
                ins = [self.to_t(x, depth + 1) for x in p.inputs]
                return self._node(p.op_type, ins, name, dict(p.attrs), p.version, typ)
        return self._node("Transpose", [v], name, {"perm": [1, 0]}, out_type=typ)

    # -- the whole rewrite
    def apply(self) -> None:
        body, loop, port = self.body, self.loop, self.port
        new_nodes: list[Node] = []
        for n in list(body.nodes):
            act = self.actions.get(id(n))
            if act is not None:
                self._rewrite(n, act)
                new_nodes.extend(self.b.nodes)
                self.b.nodes.clear()
            new_nodes.append(n)
        body.nodes = new_nodes
        self._drop_bypassed()
        for v in self._t_values():
            v.type = _transposed_type(v.type)
        # outside: transposed initial value, inverse transposes of the outputs
        at = self.graph.nodes.index(loop)
        init = port.value
        init_t = Value(f"{init.name}_T", _swapped(init.type))
        Builder(self.graph, "", nodes=self.graph.nodes).node(
            "Transpose", [init], {"perm": [1, 0]}, out=init_t, node_name=f"{init.name}_layout",
            at=at)
        port.value = init_t
        after = Builder(self.graph, "")
        ports = list(loop.output_ports)
        for p in ports:
            if p.result.uid not in self.t:
                continue
            old = p.output
            perm = [1, 0]
            if isinstance(p, Concat) and p.new_axis:
                k = p.axis % 3
                i, j = [x for x in range(3) if x != k]
                perm = list(range(3))
                perm[i], perm[j] = j, i
                t = old.type
                new_type = None
                if isinstance(t, TensorType) and t.shape is not None and len(t.shape) == 3:
                    shape = list(t.shape)
                    shape[i], shape[j] = shape[j], shape[i]
                    new_type = TensorType(t.dtype, tuple(shape))
            else:
                if isinstance(p, Concat):
                    p.axis = 1 - p.axis % 2
                new_type = _swapped(old.type)
            p.output = Value(f"{old.name}_T", new_type)
            after.node("Transpose", [p.output], {"perm": perm}, out=old,
                       node_name=f"{old.name}_layout")
        loop.set_output_ports(ports)
        at = self.graph.nodes.index(loop)
        self.graph.nodes[at + 1:at + 1] = after.nodes

    def _drop_bypassed(self) -> None:
        """Remove the pure nodes whose values were replaced by transposed copies and that
        nothing reads any more (and, in turn, what only they read)."""
        body = self.body
        defined = {v.uid: n for n in body.nodes for v in n.outputs}
        todo = [defined[u] for u in self.made if u in defined]
        while todo:
            uses = body_value_uses(self.loop)
            dead = [n for n in todo if n in body.nodes and is_pure(n)
                    and not any(uses.get(v.uid, 0) for v in n.outputs)]
            if not dead:
                return
            body.nodes = [n for n in body.nodes if not any(n is d for d in dead)]
            todo = [defined[v.uid] for d in dead for v in d.inputs
                    if v is not None and v.uid in defined]

    def _t_values(self) -> list[Value]:
        vals = [self.port.param]
        vals += [n.outputs[0] for n in self.body.nodes if n.outputs and n.outputs[0].uid in self.t
                 and n.outputs[0] is not self.port.param]
        return vals

    def _rewrite(self, n: Node, act: str) -> None:
        if act == "elementwise":
            n.inputs = [self.to_t(v) for v in n.inputs]
        elif act == "matmul":
            x, y = n.inputs
            n.inputs = [self.to_t(y), self.to_t(x)]
        elif act in ("reduce_keep", "reduce_drop"):
            axes, where_ = _reduce_axes(n)
            new = sorted(1 - (x % 2) for x in axes)
            if where_ == "input":
                n.inputs = [n.inputs[0], self._i64(f"{n.name or n.op_type}_axes_T", new),
                            *n.inputs[2:]]
        elif act == "untranspose":
            n.op_type, n.attrs, n.version = "Identity", {}, 13
        self.rewritten.add(id(n))

