"""The NumPy kernel of the canonical `Loop` (see `itergraph.ir.loop` for its meaning).

The body is compiled once into a plan (`layout`); every iteration updates a preallocated
argument list in place and calls the plan from a driver generated for the loop's port layout
(`driver`). Sliced inputs are views of the input, the axis moved to the front once per run
(`bounds`). Concatenated outputs go into a buffer preallocated for the known iteration count,
or one that doubles when the count is not known in advance (`outputs`).
"""

from __future__ import annotations

import time

import numpy as np

from .....errors import Error, ExecutionError, where
from .....ir import Graph, Loop
from .....ir.clone import clone_node
from .....passes.pipelines import NUMPY, run_pipeline
from ....common.progress import report
from ...plan import CompileContext
from .. import kernel
from .bounds import check_exhaustion, scalar, sliced_views, trip_limit
from .driver import UNBOUNDED, make_driver
from .layout import LoopLayout
from .outputs import accumulators, finish_outputs

#: The `Loop` flags this kernel acts on (`ir.loop.loop_flags`: every one, in `bounds`).
HANDLES_LOOP_FLAGS = frozenset({"negative_trip_count", "strict_slices", "equal_slices"})
IGNORES_LOOP_FLAGS: dict[str, str] = {}


@kernel("Loop", domain="itergraph")
def loop_kernel(loop: Loop, ctx: CompileContext):
    if ctx.optimize and id(loop) not in ctx.loops_done:
        fast = _rewritten_kernel(loop, ctx)
        if fast is not None:
            return fast
    return plain_kernel(loop, ctx)


def _rewritten_kernel(loop: Loop, ctx: CompileContext):
    """The kernel of a rewritten copy of `loop` (`passes.pipelines.NUMPY`), or None when the
    rewrites change nothing.

    The copy, with the nodes moved out of its body in front of it, is compiled as a small
    graph reading the loop's own inputs and captures. It keeps the loop's values and errors on
    every input (the pass contract, `passes.pipelines`), so its run is the loop's run.
    """
    copy = clone_node(loop, {})
    read = ctx.read_stack[-1] if ctx.read_stack else None
    # only the outputs the graph reads: the rewrites may drop the others (a TensorFlow
    # loop's counters) where that lets them fuse the loop
    wanted = [i for i, v in enumerate(loop.outputs) if read is None or v.uid in read]
    args = [*loop.inputs, *loop.captured()]
    keep = [i for i, v in enumerate(args) if v is not None]
    declared = list({args[i].uid: args[i] for i in keep}.values())
    wrapper = Graph(f"{loop.name or 'loop'} (rewritten)", nodes=[copy], inputs=declared,
                    outputs=[copy.outputs[i] for i in wanted])
    changed = run_pipeline(NUMPY, wrapper)
    for g in (wrapper, loop.body):
        for _, n in g.walk():
            if isinstance(n, Loop):
                ctx.loops_done.add(id(n))
    if not changed:
        return None
    try:
        plan = ctx.compile(wrapper, inputs=[args[i] for i in keep])
    except Error:
        return None  # compiling the original reports what is wrong
    if plan.captures:  # the copy reads something the loop does not: leave it
        return None
    fn = plan.fn
    n_out = len(loop.outputs)

    def run(*a):
        got = fn(*[a[i] for i in keep])
        outs = [None] * n_out
        for i, x in zip(wanted, got):
            outs[i] = x
        return outs[0] if n_out == 1 else outs

    return run


def plain_kernel(loop: Loop, ctx: CompileContext):
    """The kernel running `loop` as it is: ``run(trip, cond, *port values, *Concat lengths,
    *captures)`` returns its outputs."""
    ctx.loop_path.append(loop.name or "<unnamed>")
    try:
        lay = LoopLayout(loop, ctx)
    finally:
        ctx.loop_path.pop()
    outermost = not ctx.loop_path
    path = (*ctx.loop_path, loop.name or "<unnamed>")
    body = lay.plan.fn if ctx.profiler is None else ctx.profiler.body(path, loop, lay.plan.fn)
    tick = None
    if ctx.progress and outermost:
        tick = _Tick(loop.name or "<unnamed>")
    drive = make_driver(lay, ctx.max_iterations, body=body, tick=tick)

    def run(trip, cond0, *rest):
        values, lengths, outer = lay.split(rest)
        allowed = trip_limit(loop, trip)
        views, limit, shortest = sliced_views(lay, values, allowed)
        if tick is not None:  # a condition may stop it early: no total then
            tick.start(limit if loop.condition_result is None and loop.precondition is None
                       else None)
        cond = np.array(True) if cond0 is None else scalar(loop, "initial condition", cond0)
        accs = accumulators(lay, limit, ctx.max_iterations)
        try:
            k, cond, state, last = drive(
                UNBOUNDED if limit is None else limit, cond,
                [values[j] for j in lay.carried_sources], views,
                [values[j] for j in lay.invariant],
                [outer[i] for i in lay.body_captures], [outer[i] for i in lay.pre_captures],
                accs, lay.iteration)
        except ValueError as e:  # a condition that is not one boolean
            raise ExecutionError(f"{where(loop)}: condition must hold one boolean: {e}") from e
        if tick is not None:
            tick(k, True)
        check_exhaustion(lay, k, cond, state, allowed, shortest, values, outer)
        outs = finish_outputs(lay, k, state, last, accs, values, lengths, outer)
        return outs[0] if len(outs) == 1 else outs

    return run


class _Tick:
    """The progress report of an outermost loop, called by its driver when the steps done
    reach `due`: about every `SPACING` seconds, whatever one step costs (a tight body would
    spend more on a call per step than on itself)."""

    SPACING = 0.05

    def __init__(self, name: str):
        self.name = name
        self.due = [1]
        self.t0 = time.perf_counter()
        self.total: int | None = None

    def start(self, total: int | None = None) -> None:
        """A run begins that does at most `total` steps (None: not known)."""
        self.due[0], self.t0, self.total = 1, time.perf_counter(), total

    def __call__(self, steps: int, done: bool = False) -> None:
        report(self.name, steps, done, self.total)
        rate = steps / max(time.perf_counter() - self.t0, 1e-9)
        self.due[0] = steps + max(1, int(rate * self.SPACING))
