"""What the Loop kernel prepares once per loop: the body's compiled plans and where each of
the loop's values goes into them and comes out of them."""

from __future__ import annotations

import numpy as np

from .....ir import Carried, Concat, Invariant, Last, Loop, Sliced, Value
from ...plan import CompileContext


class LoopLayout:
    """The compiled body of `loop` and the positions of the loop's values around it.

    The kernel is called as ``run(trip, cond, *port values, *Concat lengths, *captures)``
    (`split` separates the three groups after the first two). The body plan returns, in
    order: the condition (when the body computes one), the carried results, the results of
    the Concat outputs, then those of the Last outputs that are not carried values;
    `state_slots`, `concat_slots` and `plain_slots` are their positions. The body plan reads
    the captures at `body_captures`, the precondition plan those at `pre_captures`.
    """

    def __init__(self, loop: Loop, ctx: CompileContext):
        self.loop = loop
        carried = loop.carried
        out_ports = loop.output_ports
        self.concat_idx = [i for i, p in enumerate(out_ports) if isinstance(p, Concat)]
        last_idx = [i for i, p in enumerate(out_ports) if isinstance(p, Last)]
        # Last outputs of carried results come from the state; others from the last iteration.
        self.last_from_state = {i: carried.index(c) for i in last_idx
                                if (c := loop.carried_for_result(out_ports[i].result)) is not None}
        self.last_plain = [i for i in last_idx if i not in self.last_from_state]

        results: list[Value] = []
        if loop.condition_result is not None:
            results.append(loop.condition_result)
        self.state_slots = [len(results) + j for j in range(len(carried))]
        results.extend(c.result for c in carried)
        self.concat_slots = [len(results) + j for j in range(len(self.concat_idx))]
        results.extend(out_ports[i].result for i in self.concat_idx)
        self.plain_slots = [len(results) + j for j in range(len(self.last_plain))]
        results.extend(out_ports[i].result for i in self.last_plain)

        self.params = list(loop.body.inputs)
        self.plan = ctx.compile(loop.body, outputs=results, inputs=self.params)
        self.pre_plan = (ctx.compile(loop.body, outputs=[loop.precondition], inputs=self.params)
                         if loop.precondition is not None else None)
        self.captures = loop.captured()
        cap_pos = {v.uid: i for i, v in enumerate(self.captures)}
        self.body_captures = [cap_pos[v.uid] for v in self.plan.captures]
        self.pre_captures = ([cap_pos[v.uid] for v in self.pre_plan.captures]
                             if self.pre_plan else [])

        ports = loop.input_ports
        self.n_ports = len(ports)
        self.sliced = [(j, p) for j, p in enumerate(ports) if isinstance(p, Sliced)]
        self.invariant = [j for j, p in enumerate(ports) if isinstance(p, Invariant)]
        self.carried_sources = [j for j, p in enumerate(ports) if isinstance(p, Carried)]
        self.length_ports = [p for p in out_ports if isinstance(p, Concat) and p.length is not None]
        self.it_dtype, self.it_shape = loop.iteration_form()
        # No condition and no precondition: the iteration count is known before the loop runs.
        self.known_count = loop.condition_result is None and self.pre_plan is None

    def split(self, rest: tuple) -> tuple[tuple, tuple, tuple]:
        """The kernel's arguments after trip and condition: (port values, lengths, captures)."""
        n, m = self.n_ports, self.n_ports + len(self.length_ports)
        return rest[:n], rest[n:m], rest[m:]

    def iteration(self, k: int) -> np.ndarray:
        """The iteration number `k` as the body's iteration parameter declares it."""
        return np.full(self.it_shape, k, self.it_dtype)

    def precondition_holds(self, k: int, cond, state, values, outer) -> bool:
        """The precondition for iteration `k` (sliced inputs, exhausted by then, read as None)."""
        loop = self.loop
        args = [None] * len(self.params)
        at = {v.uid: i for i, v in enumerate(self.params)}
        if loop.iteration_param is not None:
            args[at[loop.iteration_param.uid]] = self.iteration(k)
        if loop.condition_param is not None:
            args[at[loop.condition_param.uid]] = cond
        for c, v in zip(loop.carried, state):
            args[at[c.param.uid]] = v
        for j in self.invariant:
            args[at[loop.input_ports[j].param.uid]] = values[j]
        return bool(self.pre_plan.fn(*args, *[outer[i] for i in self.pre_captures])[0])

