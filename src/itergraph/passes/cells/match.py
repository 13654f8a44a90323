"""Recognising a recurrent cell in a loop body (for `fuse_cells`): LSTM, GRU or RNN.

Not a pass: `match_cell` reads a loop body and returns a `CellMatch`, the cell in the ONNX
operators' terms, or None. Two spellings are recognised:

- a decomposed cell: gate pre-activations affine in the step input ``x`` and the hidden
  state ``h`` (`affine`), activations, and the state updates, in any gate order and
  operand order:

  - RNN ``h' = f(pre)``;
  - GRU ``h' = (1 - z) * n + z * h`` or ``n + z * (h - n)`` (or, sigmoid gates only, with
    ``u = 1 - z``: ``u * n + (1 - u) * h`` or ``h + u * (n - h)``), ``z = f(pre_z)``,
    ``n = g(pre_x + r * pre_h)`` (``linear_before_reset``) or ``n = g(pre(x, r * h))``;
  - LSTM ``c' = f_g * c + i * g``, ``h' = o * h(c')``, with optional peepholes
    (``p * c`` added to i and f, ``p * c'`` to o) and coupled forget gates ``f_g = 1 - i``;

  every activation input optionally clipped to ``[-t, t]`` (the same t everywhere, none on
  LSTM's ``h(c')``); the gate activations of one kind (LSTM f for i, f, o; GRU f for z, r)
  must be one function;
- the ``LSTM``/``GRU``/``RNN`` operator over a sequence of one step (forward, no
  ``sequence_lens``, layout 0), its states read through ``Unsqueeze(axis 0)`` and its
  results through ``Squeeze(axis 0)`` (how OpenVINO's ``LSTMCell``/``GRUCell``/``RNNCell``
  import).

A match records the *anchors*: body values that are the new hidden (``"h"``) or cell
(``"c"``) state, possibly with leading unit axes inserted (``("h", (0, 1))``); loop results
must be derived from them (`glue`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...ir.canonical import int_operand
from ...ir.graph import Node, Value
from ...ir.loop import Loop
from ...ir.static_values import static_value
from ..loop_motion import LoopScope, const_value
from .affine import Affine, AffineScope, Inv, declared_width

#: gate letters in the ONNX operators' order
GATES = {"LSTM": "iofc", "GRU": "zrh", "RNN": "h"}

# ONNX activation op -> its parameters with their defaults (alpha, beta)
_ACTS = {"Sigmoid": (), "Tanh": (), "Relu": (), "Softsign": (), "Softplus": (),
         "HardSigmoid": (("alpha", 0.2), ("beta", 0.5)), "LeakyRelu": (("alpha", 0.01),),
         "ThresholdedRelu": (("alpha", 1.0),), "Elu": (("alpha", 1.0),)}


@dataclass
class CellMatch:
    """A cell in the ONNX operators' terms.

    `gates`: per gate letter (`GATES`), the affine pre-activation outside the activation; its
    terms read `x` (input side) or the recurrent source (the hidden state; GRU's ``h`` gate
    without ``linear_before_reset``: ``r * h``). GRU with ``linear_before_reset``: `gates`
    ``h`` is the part outside ``r * (...)`` and `inner` the part inside. `attrs`: the
    operators' ``activations``/``activation_alpha``/``activation_beta``/``clip``/
    ``linear_before_reset``/``input_forget`` attributes for one direction."""

    kind: str
    hidden: int
    gates: dict[str, Affine]
    attrs: dict
    x: Value
    h: Value  # hidden-state parameter
    c: Value | None = None  # LSTM cell-state parameter
    inner: Affine | None = None
    peep: dict[str, Inv] = field(default_factory=dict)
    anchors: dict[int, tuple[str, tuple[int, ...]]] = field(default_factory=dict)


def strip(v: Value | None) -> Value | None:
    """`v` without the Identity nodes in front of it."""
    while (v is not None and v.producer is not None and v.producer.op_type == "Identity"
           and v.producer.domain == ""):
        v = v.producer.inputs[0]
    return v


def producer_of(v: Value | None, *ops: str) -> Node | None:
    v = strip(v)
    p = None if v is None else v.producer
    if p is None or p.domain != "" or p.op_type not in ops or None in p.inputs:
        return None
    return p


def same_value(a: Value | None, b: Value | None) -> bool:
    return a is not None and b is not None and strip(a) is strip(b)


def _one(v: Value | None) -> bool:
    """`v` is a constant 1 that broadcasts without changing shape (scalar, [1], [1, 1]), maybe
    cast (OpenVINO's float16-compressed constants)."""
    c = static_value(strip(v)) if v is not None else None
    return c is not None and c.size == 1 and c.ndim <= 2 and float(c.reshape(())) == 1.0


def _one_minus(v: Value | None) -> Value | None:
    """z when `v` is ``1 - z``: ``Sub(1, z)``, ``Add(Neg(z), 1)`` (``torch.onnx``) or
    ``Add(Mul(z, -1), 1)`` (OpenVINO's PyTorch frontend, the -1 cast to the type)."""
    s = producer_of(v, "Sub")
    if s is not None:
        return s.inputs[1] if _one(s.inputs[0]) else None
    a = producer_of(v, "Add")
    if a is None:
        return None
    for x, one in operand_pairs(a):
        if not _one(one):
            continue
        neg = producer_of(x, "Neg")
        if neg is not None:
            return neg.inputs[0]
        m = producer_of(x, "Mul")
        for z, k in operand_pairs(m) if m is not None else ():
            c = static_value(strip(k))
            if c is not None and c.size == 1 and float(c.reshape(())) == -1.0:
                return z
    return None


def operand_pairs(node: Node):
    a, b = node.inputs[0], node.inputs[1]
    return ((a, b), (b, a))


def _addends(v: Value, out: list[Value]) -> None:
    p = producer_of(v, "Add")
    if p is not None and len(p.inputs) == 2:
        _addends(p.inputs[0], out)
        _addends(p.inputs[1], out)
    else:
        out.append(v)


# ----------------------------------------------------------------------------- activations


def _activation(v: Value | None) -> tuple[tuple, Value, float | None] | None:
    """(activation key, its input before any clip, clip threshold) of an activation output."""
    p = producer_of(v, *_ACTS)
    if p is None or len(p.inputs) != 1:
        return None
    key = (p.op_type, *(float(p.attrs.get(k, d)) for k, d in _ACTS[p.op_type]))
    pre, clip = p.inputs[0], None
    cp = producer_of(pre, "Clip")
    if cp is not None:
        lo, hi = _clip_bounds(cp)
        if lo is None or hi is None or lo != -hi or hi <= 0:
            return None
        pre, clip = cp.inputs[0], hi
    return key, pre, clip


def _clip_bounds(p: Node):
    vals = []
    for v in (list(p.inputs[1:]) + [None, None])[:2]:
        c = static_value(v) if v is not None else None
        vals.append(None if c is None or c.size != 1 else float(c.reshape(())))
    return vals[0], vals[1]


def _act_attrs(keys: list[tuple], clips: set) -> dict | None:
    """The operators' attributes for activations `keys` (one per gate kind) and clips."""
    if len(clips) != 1:
        return None
    clip = next(iter(clips))
    names, alphas, betas = [], [], []
    for name, *params in keys:
        names.append(name)
        if params:
            alphas.append(params[0])
        if len(params) > 1:
            betas.append(params[1])
    attrs: dict = {"activations": names}
    if alphas:
        attrs["activation_alpha"] = alphas
    if betas:
        attrs["activation_beta"] = betas
    if clip is not None:
        attrs["clip"] = clip
    return attrs


# ----------------------------------------------------------------------------- gates


class _Pre:
    """Gate pre-activations: affine parts over `allowed` sources, LSTM peepholes."""

    def __init__(self, forms: AffineScope, allowed: set[int]):
        self.forms = forms
        self.allowed = allowed

    def __call__(self, v: Value, cols: int | None = None, peep_state: Value | None = None):
        """(affine form, peephole vector or None) of the pre-activation `v`, else None."""
        leaves: list[Value] = []
        _addends(v, leaves)
        total, peep, rest = None, None, []
        for leaf in leaves:
            m = producer_of(leaf, "Mul") if peep_state is not None and peep is None else None
            if m is not None:
                got = [a for a, b in operand_pairs(m) if same_value(b, peep_state)
                       and self.forms.is_invariant(a)]
                if got:
                    peep = got[0]
                    continue
            f = self.forms.form(leaf)
            if f is None:
                rest.append(leaf)
            elif not f.sources() <= self.allowed or (total is not None and total.cols != f.cols):
                return None
            else:
                total = f if total is None else total + f
        cols = total.cols if total is not None else cols
        if cols is None:
            return None
        total = total or Affine(cols)
        for b in rest:
            vb = self.forms.vector(b, cols)
            if vb is None:
                return None
            total = total + Affine(cols, (), (vb,))
        if cols != total.cols:
            return None
        pv = None
        if peep is not None:
            pv = self.forms.vector(peep, cols)
            if pv is None:
                return None
        return total, pv


def _x_of(xs: dict[int, Value], forms: list[Affine]) -> Value | None:
    """The one step-input value the gates read (None when they read none or several)."""
    used = {s for f in forms for s in f.sources()} & set(xs)
    return xs[next(iter(used))] if len(used) == 1 else None


def match_cell(loop: Loop, scope: LoopScope, xs: dict[int, Value],
               states: list) -> CellMatch | None:
    """The cell of `loop`'s body, if it is one. `xs`: the values (by uid) that may be the
    step input; `states`: the carried ports that change between iterations."""
    for fn in (_match_node, _match_lstm, _match_gru, _match_rnn):
        m = fn(scope, xs, states)
        if m is not None:
            return m
    return None


def _forms(scope: LoopScope, xs: dict[int, Value], *recurrent: Value) -> AffineScope:
    srcs = {v.uid: declared_width(v) for v in [*xs.values(), *recurrent]}
    return AffineScope(scope, srcs)


def _match_rnn(scope, xs, states) -> CellMatch | None:
    if len(states) != 1:
        return None
    h = states[0].param
    res = strip(states[0].result)
    act = _activation(res)
    if act is None:
        return None
    key, pre, clip = act
    got = _Pre(_forms(scope, xs, h), set(xs) | {h.uid})(pre)
    if got is None or got[1] is not None:
        return None
    x = _x_of(xs, [got[0]])
    attrs = _act_attrs([key], {clip})
    if x is None or attrs is None:
        return None
    return CellMatch("RNN", got[0].cols, {"h": got[0]}, attrs, x, h,
                     anchors={res.uid: ("h", ())})


# ----------------------------------------------------------------------------- GRU


def _gru_update(res: Value, h: Value):
    """(z value, n value, whether the z value is really 1 - z) of a GRU state update."""
    p = producer_of(res, "Add")
    if p is None:
        return None
    for a, b in operand_pairs(p):
        ma, mb = producer_of(a, "Mul"), producer_of(b, "Mul")
        if ma is not None and mb is not None:
            for s_, n in operand_pairs(ma):  # (1 - z) * n + z * h   |   u * n + (1 - u) * h
                for g, hh in operand_pairs(mb):
                    if not same_value(hh, h):
                        continue
                    if same_value(g, _one_minus(s_)):
                        return g, n, False
                    if same_value(_one_minus(g), s_):
                        return s_, n, True
        if mb is not None:  # n + z * (h - n)   |   h + u * (n - h)
            for g, d in operand_pairs(mb):
                s = producer_of(d, "Sub")
                if s is None:
                    continue
                if same_value(s.inputs[0], h) and same_value(s.inputs[1], a):
                    return g, a, False
                if same_value(a, h) and same_value(s.inputs[1], h):
                    return g, s.inputs[0], True
    return None


def _match_gru(scope, xs, states) -> CellMatch | None:
    if len(states) != 1:
        return None
    h = states[0].param
    res = strip(states[0].result)
    upd = _gru_update(res, h)
    if upd is None:
        return None
    zv, nv, flipped = upd
    za, na = _activation(zv), _activation(nv)
    if za is None or na is None or (flipped and za[0] != ("Sigmoid",)):
        return None
    for find in (_gru_lbr, _gru_plain):
        got = find(scope, xs, h, za, na)
        if got is None:
            continue
        z, r, outer, inner, clips = got
        if flipped:
            z = z.scaled(-1.0)
        attrs = _act_attrs([za[0], na[0]], clips)
        x = _x_of(xs, [z, r, outer] + ([inner] if inner is not None else []))
        if attrs is None or x is None:
            continue
        attrs["linear_before_reset"] = int(inner is not None)
        return CellMatch("GRU", z.cols, {"z": z, "r": r, "h": outer}, attrs, x, h,
                         inner=inner, anchors={res.uid: ("h", ())})
    return None


def _gate(pre: _Pre, v: Value, cols: int | None = None) -> Affine | None:
    got = pre(v, cols)
    return None if got is None or got[1] is not None else got[0]


def _gru_lbr(scope, xs, h, za, na):
    """n = g(A(x) + r * B(h)): (z, r, A, B, clips) or None."""
    forms = _forms(scope, xs, h)
    both = _Pre(forms, set(xs) | {h.uid})
    z = _gate(both, za[1])
    if z is None:
        return None
    leaves: list[Value] = []
    _addends(na[1], leaves)
    for k, leaf in enumerate(leaves):
        m = producer_of(leaf, "Mul")
        if m is None:
            continue
        for rv, inner_v in operand_pairs(m):
            ra = _activation(rv)
            if ra is None or ra[0] != za[0]:
                continue
            r = _gate(both, ra[1], z.cols)
            inner = _gate(_Pre(forms, {h.uid}), inner_v, z.cols)
            if r is None or inner is None or r.cols != z.cols or inner.cols != z.cols:
                continue
            outer = Affine(z.cols)
            for rest in leaves[:k] + leaves[k + 1:]:
                f = _gate(_Pre(forms, set(xs)), rest, z.cols)
                if f is None:
                    outer = None
                    break
                outer = outer + f
            if outer is not None and outer.cols == z.cols:
                return z, r, outer, inner, {za[2], ra[2], na[2]}
    return None


def _gru_plain(scope, xs, h, za, na):
    """n = g(A(x) + (r * h) R): (z, r, that form, None, clips) or None."""
    for node in scope.loop.body.nodes:
        if node.op_type != "Mul" or node.domain != "" or len(node.inputs) != 2:
            continue
        for rv, hh in operand_pairs(node):
            ra = _activation(rv)
            if not same_value(hh, h) or ra is None or ra[0] != za[0]:
                continue
            q = node.outputs[0]
            forms = _forms(scope, xs, h, q)
            both = _Pre(forms, set(xs) | {h.uid})
            z = _gate(both, za[1])
            r = _gate(both, ra[1], None if z is None else z.cols)
            n = _gate(_Pre(forms, set(xs) | {q.uid}), na[1], None if z is None else z.cols)
            if z is None or r is None or n is None or not (z.cols == r.cols == n.cols):
                continue
            return z, r, n, None, {za[2], ra[2], na[2]}
    return None


# ----------------------------------------------------------------------------- LSTM


def _match_lstm(scope, xs, states) -> CellMatch | None:
    if len(states) != 2:
        return None
    for hp, cp in (states, states[::-1]):
        m = _lstm(scope, xs, hp, cp)
        if m is not None:
            return m
    return None


def _lstm_parts(h_res: Value, c_res: Value, c: Value):
    """(o, key of h(), forget-gate value, i * g node) of h' = o * h(c'), c' = f * c + i * g."""
    mh, ca = producer_of(h_res, "Mul"), producer_of(c_res, "Add")
    if mh is None or ca is None:
        return None
    found = [(o, a[0]) for o, t in operand_pairs(mh)
             if (a := _activation(t)) is not None and a[2] is None and same_value(a[1], c_res)]
    if not found:
        return None
    for a, b in operand_pairs(ca):
        m1, m2 = producer_of(a, "Mul"), producer_of(b, "Mul")
        if m1 is not None and m2 is not None:
            for f, cc in operand_pairs(m1):
                if same_value(cc, c):
                    return found[0][0], found[0][1], f, m2
    return None


def _lstm(scope: LoopScope, xs, hp, cp) -> CellMatch | None:
    h, c = hp.param, cp.param
    h_res, c_res = strip(hp.result), strip(cp.result)
    parts = _lstm_parts(h_res, c_res, c)
    if parts is None:
        return None
    o_v, key_h, f_v, ig = parts
    oa = _activation(o_v)
    if oa is None:
        return None
    key_f = oa[0]
    pairs = [(i, g) for i, g in operand_pairs(ig) if (ia := _activation(i)) is not None
             and ia[0] == key_f and _activation(g) is not None]
    if not pairs:
        return None
    i_v, g_v = pairs[0]
    s = producer_of(f_v, "Sub")
    couple = s is not None and _one(s.inputs[0]) and same_value(s.inputs[1], i_v)
    pre = _Pre(_forms(scope, xs, h), set(xs) | {h.uid})
    todo = [("i", i_v, c), ("o", o_v, c_res), ("c", g_v, None)]
    if not couple:
        todo.append(("f", f_v, c))
    gates, peep, clips, key_g = {}, {}, set(), None
    for letter, v, state in todo:
        a = _activation(v)
        if a is None or (letter != "c" and a[0] != key_f):
            return None
        got = pre(a[1], None, state)
        if got is None:
            return None
        gates[letter] = got[0]
        if got[1] is not None:
            peep[letter] = got[1]
        clips.add(a[2])
        if letter == "c":
            key_g = a[0]
    if couple:  # the forget gate is 1 - i: its weights are never read
        gates["f"] = gates["i"]
    if len({g.cols for g in gates.values()}) != 1:
        return None
    attrs = _act_attrs([key_f, key_g, key_h], clips)
    x = _x_of(xs, list(gates.values()))
    if attrs is None or x is None:
        return None
    attrs["input_forget"] = int(couple)
    return CellMatch("LSTM", gates["i"].cols, {k: gates[k] for k in "iofc"}, attrs, x, h, c=c,
                     peep=peep, anchors={h_res.uid: ("h", ()), c_res.uid: ("c", ())})


# ----------------------------------------------------------------------------- cell ops


def _unit_moves(node: Node, dims: list) -> list | None:
    """`dims` (a shape as tokens: 1 for a unit axis, distinct objects for the others) after
    `node`, when `node` only adds, drops or moves unit axes (the others keep their order, so
    the data is the same), else None."""
    op, r = node.op_type, len(dims)
    if op == "Identity":
        return dims
    if op in ("Squeeze", "Unsqueeze"):
        axes = int_operand(node, 1)
        if axes is None:
            return None
        if op == "Squeeze":
            axes = {a % r for a in axes}
            return None if any(dims[a] != 1 for a in axes) else [
                d for k, d in enumerate(dims) if k not in axes]
        out: list = list(dims)
        for a in sorted(a % (r + len(axes)) for a in axes):
            out.insert(a, 1)
        return out
    if op == "Transpose":
        perm = node.attrs.get("perm")
        out = [dims[int(k)] for k in perm] if perm is not None and len(perm) == r else None
    elif op == "Reshape" and not node.attrs.get("allowzero", 0) and len(node.inputs) == 2:
        target = const_value(node.inputs[1])
        if target is None:
            return None
        out = [dims[k] if t == 0 and k < r else (1 if t == 1 else ("rest" if t == -1 else None))
               for k, t in enumerate(int(t) for t in np.ravel(target))]
        rest = [d for d in dims if d != 1 and d not in out]
        if None in out or out.count("rest") > 1 or len(rest) > ("rest" in out):
            return None
        out = [rest[0] if d == "rest" and rest else (1 if d == "rest" else d) for d in out]
    else:
        return None
    keep = [d for d in dims if d != 1]
    return out if out is not None and [d for d in out if d != 1] == keep else None


_UNIT_OPS = ("Squeeze", "Unsqueeze", "Transpose", "Reshape", "Identity")


def _unit_base(v: Value | None, want: list, limit: int = 8) -> Value | None:
    """The nearest rank-2 `w` ([a, b]) such that `v` is `w` with unit axes added, dropped or
    moved by shape ops (`_unit_moves`) into the shape `want` (tokens ``"a"``, ``"b"``, 1)."""
    chain: list[Node] = []
    v = strip(v)
    while v is not None and v.producer is not None and len(chain) < limit:
        p = v.producer
        if p.domain != "" or p.op_type not in _UNIT_OPS:
            break
        chain.append(p)
        v = strip(p.inputs[0])
        dims: list | None = ["a", "b"]
        for q in reversed(chain):
            dims = _unit_moves(q, dims)
            if dims is None:
                break
        if dims == want:
            return p.inputs[0]
    return None


def _unsqueezed0(v: Value | None) -> Value | None:
    """`w` when `v` is ``Unsqueeze(w, [0])``, or the same data by moves of unit axes
    (OpenVINO's ONNX frontend: ``Transpose(Reshape(Unsqueeze(w, 0), [-1, 1, 0]), [1, 0,
    2])``)."""
    return _unit_base(v, [1, "a", "b"])


def _squeezed0_from(v: Value, out: Value) -> bool:
    """Whether `v` is ``Squeeze(out, [0])``, or the same data by moves of unit axes."""
    chain, v = [], strip(v)
    while v is not None and v is not out and v.producer is not None and len(chain) < 8:
        p = v.producer
        if p.domain != "" or p.op_type not in _UNIT_OPS:
            return False
        chain.append(p)
        v = strip(p.inputs[0])
    if v is not out or not chain:
        return False
    dims: list | None = [1, "a", "b"]
    for p in reversed(chain):
        dims = _unit_moves(p, dims)
        if dims is None:
            return False
    return dims == ["a", "b"]


def _full_lengths(v: Value | None) -> bool:
    """Whether the ``sequence_lens`` `v` of a one-step cell op is 1 everywhere (the whole
    one-step sequence, as no ``sequence_lens``): a static 1 broadcast (``Expand``) and cast."""
    v = strip(v)
    while v is not None and v.producer is not None and v.producer.domain == "" and \
            v.producer.op_type in ("Cast", "Expand", "Identity"):
        v = strip(v.producer.inputs[0])
    c = static_value(v)
    return c is not None and c.size >= 1 and bool(np.all(c == 1))


def _match_node(scope: LoopScope, xs, states) -> CellMatch | None:
    cells = [n for n in scope.loop.body.nodes if n.op_type in GATES and n.domain == ""]
    if len(cells) != 1:
        return None
    node = cells[0]
    kind = node.op_type
    ins = list(node.inputs) + [None] * 8
    direction = node.attrs.get("direction", "forward")
    if isinstance(direction, bytes):
        direction = direction.decode()
    if (direction != "forward" or node.attrs.get("layout", 0)
            or (ins[4] is not None and not _full_lengths(ins[4]))
            or ins[0] is None or ins[1] is None or ins[2] is None):
        return None
    n_states = 2 if kind == "LSTM" else 1
    x = strip(_unsqueezed0(ins[0]))
    if len(states) != n_states or x is None or x.uid not in xs:
        return None
    roles = {}
    for port in states:
        for k in range(n_states):
            if same_value(_unsqueezed0(ins[5 + k]), port.param) and _squeezed0_from(
                    port.result, node.outputs[1 + k] if 1 + k < len(node.outputs) else None):
                roles[k] = port
    if len(roles) != n_states:
        return None
    forms = AffineScope(scope, {})
    w, r = forms.matrix_sq0(ins[1]), forms.matrix_sq0(ins[2])
    G = len(GATES[kind])
    if w is None or r is None:
        return None
    H = int(node.attrs.get("hidden_size") or r.shape[1])
    gh = G * H
    if w.shape[0] != gh or r.shape != (gh, H):
        return None
    b = forms.vector_sq0(ins[3], 2 * gh) if ins[3] is not None else None
    p = forms.vector_sq0(ins[7], 3 * H) if kind == "LSTM" and ins[7] is not None else None
    if (ins[3] is not None and b is None) or (kind == "LSTM" and ins[7] is not None
                                               and p is None):
        return None
    lbr = kind == "GRU" and bool(node.attrs.get("linear_before_reset", 0))
    wt, rt = w.then("T"), r.then("T")
    gates, inner = {}, None
    for k, letter in enumerate(GATES[kind]):
        lo, hi = k * H, (k + 1) * H
        xt = ((x.uid, wt.then("cols", lo, hi)),)
        ht = ((roles[0].param.uid, rt.then("cols", lo, hi)),)
        wb = (b.then("cols", lo, hi),) if b is not None else ()
        rb = (b.then("cols", gh + lo, gh + hi),) if b is not None else ()
        if lbr and letter == "h":
            gates[letter], inner = Affine(H, xt, wb), Affine(H, ht, rb)
        else:
            gates[letter] = Affine(H, xt + ht, wb + rb)
    peep = {g: p.then("cols", k * H, (k + 1) * H) for k, g in enumerate("iof")} if p else {}
    attrs = {k: node.attrs[k] for k in ("activations", "activation_alpha", "activation_beta",
                                        "clip", "linear_before_reset", "input_forget")
             if node.attrs.get(k) is not None}
    anchors = {strip(roles[0].result).uid: ("h", ())}
    for k, axes in ((0, (0, 1)), (1, (0,))):
        if k < len(node.outputs):
            anchors[node.outputs[k].uid] = ("h", axes)
    c = None
    if kind == "LSTM":
        c = roles[1].param
        anchors[strip(roles[1].result).uid] = ("c", ())
        if len(node.outputs) > 2:
            anchors[node.outputs[2].uid] = ("c", (0,))
    return CellMatch(kind, H, gates, attrs, x, roles[0].param, c=c, inner=inner, peep=peep,
                     anchors=anchors)
