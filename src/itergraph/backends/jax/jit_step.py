"""A plan step: top-level nodes [a, b) traced into one jitted function."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import ExecutionError, where
from ...ir import Loop, Node
from ..common import progress
from . import config
from .big_constants import Retrace, big_used
from .context import (
    CannotLower,
    NeedsDriver,
    Scope,
    TooLarge,
    TraceContext,
    is_static,
    raise_error,
)
from .loops.messages import limit_before_size
from .out_of_memory import is_out_of_memory
from .records import Record


def _has_loop(nodes) -> bool:
    """Do `nodes` hold a loop (a fused one included), at any depth?"""
    return any(isinstance(n, Loop) or n.op_type == "RecurrentSequence"
               or any(_has_loop(g.nodes) for g in n.subgraphs()) for n in nodes)


class JitStep:
    """Top-level nodes [a, b) traced into one jitted function."""

    def __init__(self, cg, a: int, b: int, static: dict):
        self.cg, self.a, self.b = cg, a, b
        self.nodes = cg.nodes[a:b]
        # a graph output computed before `a` that no node here reads passes through the
        # runner, not the function (it may be a string tensor, which XLA cannot hold)
        read = {u for i in range(a, b) for u in cg.reads[i]}
        ins = [u for u in cg.live_in(a, b) if u in read]
        self.static_in = {u for u in ins if u in static}
        self.traced_in = [u for u in ins if u not in static]
        self.out = cg.step_outputs(a, b)
        self.big_uids = big_used(self.nodes, cg.big)
        ids = {id(n) for n in self.nodes}  # derived constants an earlier trace of them made
        self.big_uids += [k for k, i in cg.cache.derived_by.items() if i in ids and k in cg.big]
        self.failed_at: Node | None = None
        self.static_out: dict[int, np.ndarray] = {}
        self.traced_out: list[int] = []
        self.messages: list = []
        self.notes: list = []
        self._statics: dict[int, Any] = {}
        self._jit = None
        self.compiled = None  # the executable for host (NumPy) arguments, compiled ahead
        self.uses_limit = _has_loop(self.nodes)  # takes the iteration limit as an argument
        self.checks = True  # returns an error code (known once traced: `messages`)

    def _fn(self, *flat):
        """The traced function: ``flat`` is the traced inputs, then the large constants, then
        (with `uses_limit`) the iteration limit; it returns the traced outputs, and with
        `checks` (a run-time error can be flagged) the error code: the fewer arguments and
        results, the cheaper a call of a small program."""
        import jax.numpy as jnp

        from .trace import eval_nodes

        n, nb = len(self.traced_in), len(self.big_uids)
        args, big = flat[:n], flat[n:n + nb]
        max_it = flat[n + nb] if self.uses_limit else None
        tc = TraceContext(self.cg.cache, max_it, dict(zip(self.big_uids, big)), self.cg.big)
        scope = Scope(tc)
        scope.env.update(self._statics)
        for u, x in zip(self.traced_in, args):
            scope.env[u] = x
        try:
            eval_nodes(tc, self.nodes, scope)
        except (CannotLower, NeedsDriver):
            self.failed_at = tc.top_node
            raise
        if tc.wanted:
            raise Retrace(list(dict.fromkeys(tc.wanted)))
        static_out, traced_uids, traced = {}, [], []
        for u in self.out:
            x = scope.env[u]
            if is_static(x):
                static_out[u] = x
            else:
                traced_uids.append(u)
                traced.append(x)
        self.static_out, self.traced_out = static_out, traced_uids
        self.messages, self.notes = tc.messages, tc.notes
        self.checks = len(tc.messages) > 1
        if not self.checks:
            return traced
        err = scope.frame.err if scope.frame.err is not None else jnp.zeros((), np.int32)
        return traced, err

    def run(self, env, static, max_it) -> None:
        if self._jit is None:
            self._statics = {u: env[u] for u in self.static_in}
            self._jit = config.jit(self._fn)
            self.big_args = self.cg.big_args(self.big_uids)
        args = [env[u] for u in self.traced_in]
        try:
            outs, err = self._traced_call(args, max_it)
        except TooLarge as e:
            raise limit_before_size(e, max_it) from None
        except Exception as e:
            if not is_out_of_memory(e):
                raise
            raise ExecutionError(self._out_of_memory_message(e)) from None
        if err is not None:
            code = int(np.asarray(err))  # the buffer protocol: int(err) costs more
            if code:
                raise_error(self.messages, code, max_it)
        for u, x in zip(self.traced_out, outs):
            env[u] = x
        if progress.active():  # a compiled loop tells only that it has finished
            loops = [n for n in self.nodes if isinstance(n, Loop)]
            if loops:
                config.jax().block_until_ready(outs)
            for n in loops:
                progress.report(n.name or "<unnamed>", -1, True)
        if self.static_out:
            for u, x in self.static_out.items():
                env[u] = x
                static[u] = ("static", id(x))

    def _traced_call(self, args: list, max_it) -> tuple[list, Any]:
        """`_call`; a trace that asks for constants derived on the host (`big_constants`)
        is traced again with them as arguments (a second time at most: the first trace
        asks for all of them)."""
        max_it_arg = self.cg.max_it_arg(max_it) if self.uses_limit else None
        for _ in range(2):
            try:
                return self._call(args, max_it_arg)
            except Retrace as r:
                self.big_uids = [*self.big_uids, *r.keys]
                self.big_args = self.cg.big_args(self.big_uids)
                self._jit = config.jit(self._fn)
                self.compiled = None
        return self._call(args, max_it_arg)

    def _call(self, args: list, max_it_arg) -> tuple[list, Any]:
        """Run the step: (traced outputs, error code or None). Host arrays (the usual case)
        go to an executable compiled ahead for them, which `fast_call.FastCall` also calls;
        device arrays placed by the caller (with their shardings) go through `jax.jit`."""
        extra = (*self.big_args, max_it_arg) if self.uses_limit else self.big_args
        if all(type(x) is np.ndarray for x in args):
            if self.compiled is None:
                self.compiled = self._jit.lower(*args, *extra).compile()
            res = self.compiled(*args, *extra)
        else:
            res = self._jit(*args, *extra)
        return res if self.checks else (res, None)

    def _out_of_memory_message(self, e: BaseException) -> str:
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        what = (where(self.nodes[0]) if len(self.nodes) == 1 else
                f"the {len(self.nodes)} nodes from {where(self.nodes[0])} to "
                f"{where(self.nodes[-1])}, compiled together")
        names = {v.uid: v.name for n in self.nodes for v in n.outputs}
        outs = [f"'{names[u]}'" for u in self.out if u in names]
        if outs:
            what += " (computing " + ", ".join(outs[:8]) + (", ..." if len(outs) > 8 else "") + ")"
        return f"out of memory running {what}: {detail}"

    def records(self) -> list[Record]:
        out = []
        noted = {id(e) for e, _, _ in self.notes}
        for n in self.nodes:
            if id(n) not in noted:
                out.append(Record(where(n), True, "compiled with XLA"))
        out.extend(Record(where(e), c, r) for e, c, r in self.notes)
        return out
