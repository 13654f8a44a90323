"""Tracing state: scopes of values (static or traced), error flags, per-op contexts.

A value seen while tracing is either *static* (a NumPy array, known at trace time) or
*traced* (a JAX array). `Scope` maps IR values to them, one scope per graph being traced,
chained to the scope of the enclosing graph so that outer-scope captures resolve.

Errors that can only be detected at run time (an iteration limit, a bad index) are recorded
as flags: each `Frame` (one per traced JAX function: the top level, a loop body, a branch)
accumulates an int32 error code, 0 for "no error", else an index into the trace's message
table. Loop bodies and branches hand their code outward, and the top-level function returns
it; the runner raises the matching exception after the call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import (
    Error,
    ExecutionError,
    IterationLimitError,
    ModelError,
    UnsupportedError,
    where,
)
from ...ir import Graph, Node, Value
from ...ir.traversal import needed_nodes

FOLD_MAX_ELEMENTS = 1 << 16  # static results larger than this are computed by XLA instead


class CannotLower(UnsupportedError):
    """`element` (a node) cannot be compiled with XLA; the runner falls back to NumPy."""

    def __init__(self, element: Node | None, reason: str, needs_static: bool = False,
                 values: list[Value] | None = None):
        super().__init__(f"{where(element)}: {reason}")
        self.element = element
        self.reason = reason
        self.needs_static = needs_static  # a value computed at run time was needed at trace
        self.values = values  # the values needed at trace time, when not the node's inputs


class Bailout(ExecutionError):
    """A compiled run met a case only the NumPy backend handles (e.g. a dynamic slice whose
    run-time bounds give another size than the static one): the run is redone on NumPy."""


#: The message of the iteration limit (``{max_iterations}`` filled in), for the loop lowering
#: and the fused recurrent sequence alike.
LIMIT_MESSAGE = "stopped after max_iterations={max_iterations} iterations"


class TooLarge(ExecutionError):
    """A buffer that cannot fit in memory, refused while tracing (before anything is
    allocated). `iterations`: the iteration count of `loop` it was sized for, when that is
    what makes it large; the runner, which knows ``max_iterations``, reports the iteration
    limit instead when the loop would stop there first (as the NumPy backend does)."""

    def __init__(self, message: str, loop: Node, iterations: int | None = None):
        super().__init__(message)
        self.loop = loop
        self.iterations = iterations


class NeedsDriver(Exception):  # noqa: N818 - a signal, not an error
    """A top-level loop needs the Python-driven buffer-doubling runner (dynamic length)."""

    def __init__(self, loop):
        super().__init__(f"{where(loop)} needs the loop driver")
        self.loop = loop


def is_static(x: Any) -> bool:
    return isinstance(x, np.ndarray)


class Frame:
    """The error code of one traced JAX function (see module docstring)."""

    __slots__ = ("err",)

    def __init__(self):
        self.err = None  # None (no check registered) or a traced int32 scalar


class TraceContext:
    """Everything one trace of one jitted function shares."""

    def __init__(self, cache: CompileCache, max_it=None, big: dict[Any, Any] | None = None,
                 store: dict[Any, Any] | None = None):
        self.cache = cache  # what the compilation knows of its nodes (shape-independent)
        self.max_it = max_it  # traced int64 scalar (iteration limit) or None
        # key -> traced argument, for large constants (key: the value's uid) and the host
        # results derived from them (`big_constants.derived`)
        self.big = big or {}
        # key -> host value of every large constant and derived result; None where derived
        # results cannot become arguments (they are then computed in the trace)
        self.store = store
        self.origin: dict[int, Any] = (  # id(traced value) -> key, for the constant ones
            {id(x): k for k, x in self.big.items()} if store is not None else {})
        self.wanted: list = []  # derived keys this trace lacked: traced again with them
        self.placeholders: list = []  # stand-ins for `wanted` (kept: their ids are keys)
        self.messages: list[tuple[type, str]] = [(Error, "")]  # code 0 = no error
        self.notes: list[tuple[Any, bool, str]] = []  # (element, compiles, how/why)
        self.depth = 0  # 0 while tracing the top-level graph, >0 inside bodies/branches
        self.enclosing: list[Node] = []  # loops/Ifs being traced, innermost last
        self.top_node: Node | None = None  # top-level node being traced (fallback attribution)
        self.affine: dict[int, tuple] = {}  # id(traced int) -> (base, offset, value); `affine`
        self.cell_inputs: dict[int, Any] = {}  # id(LSTM/GRU/RNN node) -> input projection
        self.channels_last: dict[int, tuple] = {}  # id(value) -> (form, value); `channels_last`
        self.padded = 0  # >0 while tracing a body that reads grown buffers (`loops.growing`)

    def note(self, element, compiles: bool, reason: str) -> None:
        self.notes.append((element, compiles, reason))

    def check(self, frame: Frame, bad, message: str, kind: type = ExecutionError) -> None:
        """Record that `message` is an error when the traced bool `bad` is true."""
        jnp = _jnp()
        if isinstance(bad, (bool, np.bool_, np.ndarray)):
            if bool(bad):
                raise kind(message)
            return
        self.messages.append((kind, message))
        code = np.int32(len(self.messages) - 1)
        flag = jnp.where(bad, code, np.int32(0))
        frame.err = flag if frame.err is None else jnp.where(frame.err != 0, frame.err, flag)

    def merge(self, frame: Frame, err) -> None:
        """Fold an error code handed out of a nested function into `frame`."""
        if err is None:
            return
        jnp = _jnp()
        frame.err = err if frame.err is None else jnp.where(frame.err != 0, frame.err, err)


class Scope:
    """IR value -> static or traced value, for one graph; falls back to the enclosing scope."""

    __slots__ = ("env", "parent", "frame", "tc")

    def __init__(self, tc: TraceContext, parent: Scope | None = None, frame: Frame | None = None):
        self.tc = tc
        self.env: dict[int, Any] = {}
        self.parent = parent
        self.frame = frame if frame is not None else (parent.frame if parent else Frame())

    def bind(self, v: Value, x: Any) -> None:
        self.env[v.uid] = x

    def get(self, v: Value) -> Any:
        uid = v.uid
        s = self
        while s is not None:
            x = s.env.get(uid, _MISSING)
            if x is not _MISSING:
                return x
            s = s.parent
        big = self.tc.big.get(uid)
        if big is not None:
            return big
        if v.const is not None and v.producer is None:
            return np.asarray(v.const)
        raise ModelError(f"value '{v.name}' is used but not defined in any enclosing graph")


_MISSING = object()


class OpContext:
    """What a lowering rule sees besides its inputs (see `table`)."""

    __slots__ = ("node", "xp", "tc", "frame")

    def __init__(self, node: Node, xp, tc: TraceContext, frame: Frame):
        self.node = node
        self.xp = xp
        self.tc = tc
        self.frame = frame

    @property
    def folding(self) -> bool:
        return self.xp is np

    def attr(self, name: str, default: Any = None) -> Any:
        v = self.node.attrs.get(name)
        return default if v is None else v

    def const(self, x: Any, what: str) -> np.ndarray:
        """`x` as a NumPy array; CannotLower when it is only known at run time."""
        if isinstance(x, np.ndarray):
            return x
        raise CannotLower(self.node, f"{what} must be known at compile time (it is computed "
                                     "from run-time data)", needs_static=True)

    def prepared(self, x: Any, tag: Any, fn: Callable[[np.ndarray], np.ndarray]) -> Any:
        """``fn(x)`` computed once, on the host, when `x` is a constant: for a value known
        while tracing, at once (its result is embedded as `x` would be); for a large constant
        passed as an argument, once per compilation, its result becoming an argument too
        (`big_constants.derived`; `tag` names `fn` and its parameters). None when `x` is
        computed at run time, or derived results cannot be arguments here."""
        if isinstance(x, np.ndarray):
            return fn(x)
        key = self.tc.origin.get(id(x))
        if key is None:
            return None
        from .big_constants import derived

        store = self.tc.store
        return derived(self.tc, (key, tag), lambda: fn(store[key]))

    def ints(self, x: Any, what: str) -> list[int]:
        return [int(d) for d in self.const(x, what).reshape(-1)]

    def fail(self, reason: str):
        raise CannotLower(self.node, reason)

    def check(self, bad, message: str, kind: type = ExecutionError) -> None:
        """`message` (prefixed with the node) is raised when `bad` holds at run time."""
        self.tc.check(self.frame, bad, f"{where(self.node)}: {message}", kind)


def raise_error(messages: list[tuple[type, str]], code: int, max_it) -> None:
    """Raise the error a finished run flagged: `code` indexes a trace's `messages`."""
    kind, message = messages[code]
    if kind is IterationLimitError:
        message = message.replace("{max_iterations}", str(max_it))
    raise kind(message)


def _jnp():
    import jax.numpy as jnp

    return jnp


class CompileCache:
    """What one compilation learns about its graph's nodes, independent of shapes: the nodes
    that values need, and analyses of single nodes (a loop's ports). Keyed by node identity
    and kept here, never in the IR's `meta`: the IR stays free of backend state, and a graph
    changed by a pass is analysed afresh by its next compilation."""

    def __init__(self):
        self._needed: dict[tuple, list[Node]] = {}
        self._of: dict[tuple[str, int], tuple[Node, Any]] = {}
        # derived constant key -> id of the top-level node whose trace asked for it: a step
        # traced again over part of those nodes is given them from the start
        self.derived_by: dict[Any, int] = {}

    def needed(self, graph: Graph, outputs: list[Value]) -> list[Node]:
        """`needed_nodes(graph, outputs)`, computed once."""
        key = (id(graph), tuple(v.uid for v in outputs))
        nodes = self._needed.get(key)
        if nodes is None:
            nodes = self._needed[key] = needed_nodes(graph, outputs)
        return nodes

    def of(self, what: str, node: Node, make: Callable[[], Any]) -> Any:
        """The analysis `what` of `node`: ``make()``, computed once per node."""
        key = (what, id(node))
        hit = self._of.get(key)
        if hit is None:
            hit = self._of[key] = (node, make())  # holding `node` keeps its id unique
        return hit[1]


