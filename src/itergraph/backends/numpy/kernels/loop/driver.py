"""The iteration loop of one Loop, generated as straight-line Python for its port layout.

``drive(limit, cond, state, seqs, invs, caps, pre_caps, accumulators, it)`` returns
``(iterations run, last condition, final state, results of the last iteration or None)``.
Concatenated results are written straight into their accumulator's buffer while they fit and
keep their shape (`Accumulator.put` handles the first entry, growth and errors); the caller
sets each accumulator's count to the iterations run. A loop whose condition never changes and
that has no precondition runs as a ``for`` over ``range(limit)``. Body parameters the plan
does not read are passed as None (sliced ones are not indexed).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from .....errors import IterationLimitError, where
from ...source_names import source_label
from .layout import LoopLayout

UNBOUNDED = float("inf")  # the driver's `limit` for a loop without an iteration limit


def make_driver(lay: LoopLayout, max_iterations: int | None, body: Callable | None = None,
                tick: Callable | None = None) -> Callable:
    """The compiled ``drive`` function of `lay`'s loop (see the module docstring). `body`
    replaces the body plan's function (an instrumented one); `tick(steps)`, when given, is
    called with the iterations done once they reach ``tick.due[0]``, which it sets (a driver
    without it has no call; a tight body pays one comparison per step)."""
    loop = lay.loop
    source = driver_source(lay, max_iterations, tick is not None)

    def limit_reached():
        raise IterationLimitError(
            f"{where(loop)}: stopped after max_iterations={max_iterations} iterations")

    env = {"body": lay.plan.fn if body is None else body, "_tick": tick,
           "_due": tick.due if tick is not None else None,
           "pre": lay.pre_plan.fn if lay.pre_plan else None,
           "_limit": limit_reached, "_count": itertools.count, "_inf": UNBOUNDED}
    exec(compile(source, f"<itergraph loop driver: {source_label(loop.name)}>", "exec"), env)  # noqa: S102
    return env["drive"]


def driver_source(lay: LoopLayout, max_iterations: int | None, tick: bool = False) -> str:
    """The source of ``drive``: unpack its arguments, loop, return."""
    loop = lay.loop
    n_carried = len(loop.carried)
    counted = lay.known_count
    lines = _unpack(lay)
    if counted:
        lines += ["    if not cond:", f"        return 0, cond, ({_names('s', n_carried)}), r",
                  "    k = -1",
                  "    for k in (_count() if limit == _inf else range(limit)):"]
    else:
        lines += ["    k = 0", "    while k < limit and cond:"]
    lines += _iteration(lay, max_iterations)
    if tick:
        lines += ["        if k + 1 >= _due[0]:", "            _tick(k + 1)"]
    lines.append("        k += 1" if not counted else "    k += 1")
    lines += [f"    return k, cond, ({_names('s', n_carried)}), r", ""]
    return "\n".join(lines)


def _names(prefix: str, n: int) -> str:
    return "".join(f"{prefix}{i}, " for i in range(n))


def _unpack(lay: LoopLayout) -> list[str]:
    """The signature and the unpacking of state (s), sliced views (q), invariants (n),
    captures (c) and accumulators (a; b, sh, m: the buffer, entry shape and capacity the
    fast path writes into)."""
    loop = lay.loop
    n_caps = len(lay.plan.captures)
    lines = [
        "def drive(limit, cond, S, Q, N, C, P, A, it):",
        f"    {_names('s', len(loop.carried))}= S" if loop.carried else "    pass",
        f"    {_names('q', len(loop.sliced))}= Q" if loop.sliced else "    pass",
        f"    {_names('n', len(loop.invariant))}= N" if loop.invariant else "    pass",
        f"    {_names('c', n_caps)}= C" if n_caps else "    pass",
    ]
    for i in range(len(lay.concat_slots)):
        lines.append(f"    a{i} = A[{i}]; b{i} = sh{i} = None; m{i} = 0")
    lines.append("    r = None")
    return lines


def _iteration(lay: LoopLayout, max_iterations: int | None) -> list[str]:
    """The loop body of ``drive``: limit check, precondition, body call, new state and
    condition, Concat entries."""
    arglist = _body_args(lay)
    lines = []
    if max_iterations is not None:
        lines += [f"        if k >= {int(max_iterations)}:", "            _limit()"]
    if lay.pre_plan is not None:
        pre_caps = "".join(f", P[{i}]" for i in range(len(lay.pre_plan.captures)))
        lines += [f"        if not pre({arglist}{pre_caps})[0]:", "            break"]
    call_caps = "".join(f", c{i}" for i in range(len(lay.plan.captures)))
    lines.append(f"        r = body({arglist}{call_caps})")
    for i, slot in enumerate(lay.state_slots):
        lines.append(f"        s{i} = r[{slot}]")
    if lay.loop.condition_result is not None:
        lines.append("        cond = r[0]")
    for i, slot in enumerate(lay.concat_slots):
        lines += [f"        x = r[{slot}]",
                  f"        if k < m{i} and x.shape == sh{i}:",
                  f"            b{i}[k] = x",
                  "        else:",
                  f"            b{i}, sh{i}, m{i} = a{i}.put(k, x)"]
    return lines


def _body_args(lay: LoopLayout) -> str:
    """The body parameters as expressions of ``drive``'s locals, in the plan's order."""
    loop, plan, pre_plan = lay.loop, lay.plan, lay.pre_plan
    pos = {v.uid: i for i, v in enumerate(plan.inputs)}

    def used(v) -> bool:
        return plan.uses(v) or (pre_plan is not None and pre_plan.uses(v))

    args = ["None"] * len(plan.inputs)
    if loop.iteration_param is not None and used(loop.iteration_param):
        args[pos[loop.iteration_param.uid]] = "it(k)"
    if loop.condition_param is not None:
        args[pos[loop.condition_param.uid]] = "cond"
    for i, c in enumerate(loop.carried):
        args[pos[c.param.uid]] = f"s{i}"
    for i, p in enumerate(loop.sliced):
        if used(p.param):
            args[pos[p.param.uid]] = f"q{i}[k]"
    for i, p in enumerate(loop.invariant):
        args[pos[p.param.uid]] = f"n{i}"
    return ", ".join(args)
