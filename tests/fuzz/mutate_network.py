"""Networks built through the TensorRT-style API (``itergraph.network``) as seeds, and the
operators that mutate the calls that build them.

A network seed is a *script*: a list of `Step`s (``Call``: an object's method with arguments,
whose result gets a name; ``Set``: an attribute of a named object given a value), in which
an argument may be a `Ref` to an earlier result (``Ref("loop")``) or to a layer's output
(``Ref("add", 0)``). `build_network` plays a script back against a fresh network; the
mutant's file (``m.netpkl``) is the pickled script, so the runner's ``load`` stage plays it
back: an API call that refuses an argument is an outcome of that stage, as ``ig.load`` of a
file that refuses its content.

The operators (each ``fn(script, rng) -> description``): an argument replaced by a hostile
value (`net_arg`: None, negative, huge, NaN, strings, nested lists, arrays of other types, a
tensor of another type or network, a layer, a loop), an attribute set to one (`net_attr`), a
step removed (`net_drop`: a trip limit, a recurrence's next value, a loop output's length,
an output mark) or repeated (`net_dup`), an input's element type or dims (`net_input`), a
layer's or tensor's name made hostile (`net_name`: XML specials, NUL, control characters,
bidirectional and combining marks, another tensor's name), an enum argument given another
member (`net_enum`), a chain of two thousand layers (`net_wide`).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .common import INTS, NotApplicable, Registry, pick


@dataclass(frozen=True)
class Ref:
    """An earlier step's result, or output `index` of it (a layer)."""

    name: str
    index: int | None = None


@dataclass
class Step:
    """``out = obj.method(*args)`` (`method`), or ``obj.attr = args[0]`` (`attr`)."""

    obj: str
    method: str | None = None
    args: list = field(default_factory=list)
    out: str | None = None
    attr: str | None = None


@dataclass
class Script:
    steps: list[Step]
    feeds: dict


def _resolve(env: dict, a):
    if isinstance(a, Ref):
        v = env.get(a.name)
        if a.index is None or not hasattr(v, "get_output"):  # a loop, a conditional: itself
            return v
        return v.get_output(a.index)
    if isinstance(a, list):
        return [_resolve(env, x) for x in a]
    return a


def build_network(steps: list[Step]):
    """Play `steps` back against a fresh network; returns the network."""
    import itergraph.network as trt

    net = trt.Builder(trt.Logger()).create_network()
    env: dict = {"net": net}
    for s in steps:
        obj = env.get(s.obj)
        if obj is None:  # made by a step removed: a step no user could write
            continue
        args = [_resolve(env, a) for a in s.args]
        if s.attr is not None:
            setattr(obj, s.attr, args[0])
        else:
            r = getattr(obj, s.method)(*args)
            if s.out:
                env[s.out] = r
    return net


def load_script(path: Path):
    """The network a mutant file ``m.netpkl`` describes (played back here)."""
    return build_network(pickle.loads(path.read_bytes()))


def write_script(script: Script, path: Path) -> None:
    path.write_bytes(pickle.dumps(script.steps))


# -- the seeds ---------------------------------------------------------------------------------

def _c(obj, method, *args, out=None) -> Step:
    return Step(obj, method, list(args), out)


def _set(obj, attr, value) -> Step:
    return Step(obj, None, [value], None, attr)


def _mark(layer: str, name: str, index: int = 0) -> list[Step]:
    return [_set(f"{layer}#{index}", "name", name), _c("net", "mark_output", Ref(layer, index))]


def _out(layer: str, index: int = 0) -> Step:
    """Name output `index` of `layer` as ``layer#index`` (for `_mark` and attribute steps)."""
    return _c(layer, "get_output", index, out=f"{layer}#{index}")


def _counting_loop():
    import itergraph.network as trt

    T = trt  # noqa: N806
    steps = [
        _c("net", "add_input", "x", T.float32, (4, 3), out="x"),
        _c("net", "add_constant", (), np.array(3, np.int32), out="n"),
        _c("net", "add_loop", out="loop"),
        _set("loop", "name", "L"),
        _c("loop", "add_trip_limit", Ref("n", 0), T.TripLimit.COUNT, out="trip"),
        _c("loop", "add_iterator", Ref("x"), 0, False, out="it"),
        _c("net", "add_constant", (3,), np.zeros(3, np.float32), out="h0"),
        _c("loop", "add_recurrence", Ref("h0", 0), out="rec"),
        _c("net", "add_elementwise", Ref("rec", 0), Ref("it", 0), T.ElementWiseOperation.SUM,
           out="add"),
        _c("net", "add_activation", Ref("add", 0), T.ActivationType.TANH, out="act"),
        _c("rec", "set_input", 1, Ref("act", 0)),
        _c("loop", "add_loop_output", Ref("rec", 0), T.LoopOutput.LAST_VALUE, 0, out="last"),
        _c("loop", "add_loop_output", Ref("act", 0), T.LoopOutput.CONCATENATE, 0, out="all"),
        _c("all", "set_input", 1, Ref("n", 0)),
        _out("last"), _out("all"),
        *_mark("last", "h"), *_mark("all", "hs"),
    ]
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    return steps, {"x": x}


def _layers():
    import itergraph.network as trt

    T = trt  # noqa: N806
    steps = [
        _c("net", "add_input", "x", T.float32, (2, 3), out="x"),
        _c("net", "add_input", "i", T.int32, (2,), out="i"),
        _c("net", "add_constant", (1, 3), np.array([[0.5, -1, 2]], np.float32), out="w"),
        _c("net", "add_elementwise", Ref("x"), Ref("w", 0), T.ElementWiseOperation.PROD,
           out="mul"),
        _c("net", "add_unary", Ref("mul", 0), T.UnaryOperation.ABS, out="abs"),
        _c("net", "add_reduce", Ref("abs", 0), T.ReduceOperation.SUM, 2, True, out="sum"),
        _c("net", "add_shuffle", Ref("x"), out="shuf"),
        _set("shuf", "first_transpose", (1, 0)),
        _set("shuf", "reshape_dims", (6,)),
        _c("net", "add_slice", Ref("x"), (0, 1), (2, 2), (1, 1), out="slice"),
        _c("net", "add_gather", Ref("x"), Ref("i"), 1, out="gather"),
        _c("net", "add_concatenation", [Ref("x"), Ref("mul", 0)], out="cat"),
        _set("cat", "axis", 0),
        _c("net", "add_softmax", Ref("x"), out="soft"),
        _set("soft", "axes", 2),
        _c("net", "add_topk", Ref("x"), T.TopKOperation.MAX, 2, 2, out="topk"),
        _c("net", "add_matrix_multiply", Ref("x"), T.MatrixOperation.NONE, Ref("x"),
           T.MatrixOperation.TRANSPOSE, out="mm"),
        _c("net", "add_cast", Ref("i"), T.float32, out="cast"),
        _out("sum"), _out("shuf"), _out("slice"), _out("gather"), _out("cat"), _out("soft"),
        _out("topk"), _out("topk", 1), _out("mm"), _out("cast"),
        *_mark("sum", "sum"), *_mark("shuf", "shuf"), *_mark("slice", "slice"),
        *_mark("gather", "gather"), *_mark("cat", "cat"), *_mark("soft", "soft"),
        *_mark("topk", "top_v"), *_mark("topk", "top_i", 1), *_mark("mm", "mm"),
        *_mark("cast", "cast"),
    ]
    feeds = {"x": np.array([[1, -2, 3], [0.5, 4, -1]], np.float32),
             "i": np.array([2, 0], np.int32)}
    return steps, feeds


def _while_loop():
    import itergraph.network as trt

    T = trt  # noqa: N806
    steps = [
        _c("net", "add_input", "x", T.float32, (2,), out="x"),
        _c("net", "add_constant", (), np.array(10.0, np.float32), out="lim"),
        _c("net", "add_constant", (2,), np.full(2, 1.5, np.float32), out="k"),
        _c("net", "add_loop", out="loop"),
        _c("loop", "add_recurrence", Ref("x"), out="rec"),
        _c("net", "add_reduce", Ref("rec", 0), T.ReduceOperation.SUM, 1, False, out="s"),
        _c("net", "add_elementwise", Ref("s", 0), Ref("lim", 0), T.ElementWiseOperation.LESS,
           out="go"),
        _c("loop", "add_trip_limit", Ref("go", 0), T.TripLimit.WHILE, out="trip"),
        _c("net", "add_elementwise", Ref("rec", 0), Ref("k", 0), T.ElementWiseOperation.PROD,
           out="grow"),
        _c("rec", "set_input", 1, Ref("grow", 0)),
        _c("loop", "add_loop_output", Ref("rec", 0), T.LoopOutput.LAST_VALUE, 0, out="last"),
        _out("last"), *_mark("last", "y"),
    ]
    return steps, {"x": np.array([1.0, 2.0], np.float32)}


def _conditional():
    import itergraph.network as trt

    T = trt  # noqa: N806
    steps = [
        _c("net", "add_input", "c", T.bool, (), out="c"),
        _c("net", "add_input", "x", T.float32, (2, 2), out="x"),
        _c("net", "add_if_conditional", out="cond"),
        _c("cond", "set_condition", Ref("c"), out="cl"),
        _c("cond", "add_input", Ref("x"), out="xin"),
        _c("net", "add_unary", Ref("xin", 0), T.UnaryOperation.NEG, out="neg"),
        _c("net", "add_activation", Ref("xin", 0), T.ActivationType.SIGMOID, out="sig"),
        _c("cond", "add_output", Ref("neg", 0), Ref("sig", 0), out="out"),
        _out("out"), *_mark("out", "y"),
    ]
    return steps, {"c": np.array(True), "x": np.array([[1, -2], [3, 0]], np.float32)}


#: seed id -> the script and its feeds
SEEDS = {"network/counting_loop": _counting_loop, "network/layers": _layers,
         "network/while_loop": _while_loop, "network/conditional": _conditional}


# -- the operators ------------------------------------------------------------------------------

OPS = Registry()
_NAMES = ("a<b>&\"c'", "\x00", "y\x1b", "\u202ex\u202c", "e\u0301", "", " ", "x" * 5000,
          "𝔁", "]]>", "&#0;", "y")


def _hostile(script: Script, rng) -> tuple[object, str]:
    """A hostile argument value, and how to say it."""
    import itergraph.network as trt

    refs = sorted({s.out for s in script.steps if s.out})
    kind = int(rng.integers(14))
    if kind == 0:
        return None, "None"
    if kind == 1:
        v = pick(rng, INTS)
        return v, repr(v)
    if kind == 2:
        v = pick(rng, (float("nan"), float("inf"), -0.0, 1.5, 1e300))
        return v, repr(v)
    if kind == 3:
        v = pick(rng, ("", "abc", "0", "1e9", "\x00"))
        return v, repr(v)
    if kind == 4:
        v = pick(rng, ([], (), [None], (2, -3), (2**40, 2**40), (1, 2, 3, 4, 5, 6, 7, 8, 9),
                       ((1, 2),), [1.5, 2.5], (True, False)))
        return v, repr(v)
    if kind == 5:
        v = pick(rng, (np.array([1, 2], np.int64), np.zeros((2, 3), np.float64),
                       np.array(["a"]), np.array(3.5, np.float16), np.zeros(0, np.float32),
                       np.ones((2, 3), np.float32)[:, ::2], np.array([np.nan], np.float32)))
        return v, f"array {v.dtype} {v.shape}"
    if kind == 6:
        enum = pick(rng, (trt.DataType, trt.ElementWiseOperation, trt.TripLimit,
                          trt.LoopOutput, trt.ActivationType))
        v = pick(rng, list(enum.__members__.values()))
        return v, f"{enum.__name__}.{v.name}"
    if kind == 7:
        return np.int64(int(pick(rng, INTS))), "np.int64"
    if kind == 8:
        return True, "True"
    name = pick(rng, refs)
    if kind in (9, 10):  # a tensor (of another type or shape), or a layer's output
        return Ref(name, 0) if name not in ("x", "i", "c") else Ref(name), f"tensor of {name}"
    if kind == 11:
        return Ref(name), f"the object {name}"
    if kind == 12:
        return Ref(name, int(pick(rng, (1, 2, -1, 99)))), f"output of {name} out of range"
    return object(), "an object"


def _calls(script: Script, with_args: bool = True) -> list[int]:
    return [k for k, s in enumerate(script.steps) if s.method and (s.args or not with_args)]


@OPS.register("net_arg")
def net_arg(script: Script, rng) -> str:
    k = pick(rng, [k for k in _calls(script) if script.steps[k].method != "get_output"])
    s = script.steps[k]
    j = int(rng.integers(len(s.args)))
    v, said = _hostile(script, rng)
    s.args[j] = v
    return f"{s.obj}.{s.method} argument {j} -> {said}"


_ATTRS = ("axis", "axes", "reshape_dims", "first_transpose", "second_transpose", "start",
          "shape", "stride", "mode", "op", "keep_dims", "k", "alpha", "beta", "to_type",
          "zero_is_placeholder", "reverse", "kind", "precision", "name", "num_groups",
          "metadata", "set_output_type")


@OPS.register("net_attr")
def net_attr(script: Script, rng) -> str:
    objs = sorted({s.out for s in script.steps if s.out and s.out not in ("x", "i", "c")})
    obj = pick(rng, objs)
    attr = pick(rng, _ATTRS[:-1])
    v, said = _hostile(script, rng)
    at = next(k for k, s in enumerate(script.steps) if s.out == obj) + 1
    script.steps.insert(at, _set(obj, attr, v))
    return f"{obj}.{attr} = {said}"


@OPS.register("net_drop")
def net_drop(script: Script, rng) -> str:
    k = pick(rng, range(1, len(script.steps)))
    s = script.steps.pop(k)
    return f"step removed: {s.obj}.{s.method or s.attr}"


@OPS.register("net_dup")
def net_dup(script: Script, rng) -> str:
    k = pick(rng, _calls(script, with_args=False))
    s = script.steps[k]
    script.steps.insert(k + 1, Step(s.obj, s.method, list(s.args), s.out, s.attr))
    return f"step repeated: {s.obj}.{s.method}"


@OPS.register("net_input")
def net_input(script: Script, rng) -> str:
    import itergraph.network as trt

    k = pick(rng, [k for k, s in enumerate(script.steps)
                   if s.method == "add_input" and s.obj == "net"])
    s = script.steps[k]
    if rng.random() < 0.5:
        dims = list(s.args[2])
        what = int(rng.integers(4))
        if what == 0 and dims:
            dims[int(rng.integers(len(dims)))] = int(pick(rng, (-1, -7, 0, 2**31, 2**62)))
        elif what == 1:
            dims = dims + [1] * int(pick(rng, (1, 7, 40)))
        elif what == 2:
            dims = []
        else:
            dims = dims[:-1]
        s.args[2] = tuple(dims)
        return f"input '{s.args[0]}' dims -> {tuple(dims)}"
    dt = pick(rng, list(trt.DataType.__members__.values()))
    s.args[1] = dt
    return f"input '{s.args[0]}' dtype -> {dt.name}"


@OPS.register("net_name")
def net_name(script: Script, rng) -> str:
    names = [k for k, s in enumerate(script.steps) if s.attr == "name"]
    layers = sorted({s.out for s in script.steps if s.out and "#" not in s.out
                     and s.obj in ("net", "loop", "cond")})
    name = pick(rng, _NAMES)
    if names and rng.random() < 0.6:
        s = script.steps[pick(rng, names)]
        s.args[0] = name if rng.random() < 0.8 else next(
            (t.args[0] for t in script.steps if t.method == "add_input"), name)
        return f"{s.obj}.name -> {s.args[0][:20]!r}"
    obj = pick(rng, layers)
    at = next(k for k, s in enumerate(script.steps) if s.out == obj) + 1
    script.steps.insert(at, _set(obj, "name", name))
    return f"{obj}.name -> {name[:20]!r}"


@OPS.register("net_enum")
def net_enum(script: Script, rng) -> str:
    import enum

    spots = [(k, j) for k, s in enumerate(script.steps) for j, a in enumerate(s.args)
             if isinstance(a, enum.Enum)]
    k, j = pick(rng, spots)
    old = script.steps[k].args[j]
    new = pick(rng, [m for m in type(old).__members__.values() if m is not old])
    script.steps[k].args[j] = new
    return f"{script.steps[k].obj}.{script.steps[k].method} {old.name} -> {new.name}"


@OPS.register("net_wide")
def net_wide(script: Script, rng) -> str:
    """A chain of 2,000 unary layers before the first marked output's layer."""
    import itergraph.network as trt

    k = next(k for k, s in enumerate(script.steps) if s.method == "add_input")
    src = script.steps[k].out
    n = int(pick(rng, (500, 2000)))
    chain, prev = [], Ref(src)
    for j in range(n):
        chain.append(_c("net", "add_unary", prev, trt.UnaryOperation.NEG, out=f"w{j}"))
        prev = Ref(f"w{j}", 0)
    chain += [_out(f"w{n - 1}"), *_mark(f"w{n - 1}", "wide")]
    script.steps[k + 1:k + 1] = chain
    return f"{n} layers in a chain from '{src}'"


def seed_script(seed_id: str) -> Script:
    if seed_id not in SEEDS:
        raise NotApplicable(f"no network seed {seed_id}")
    steps, feeds = SEEDS[seed_id]()
    return Script(steps, feeds)
