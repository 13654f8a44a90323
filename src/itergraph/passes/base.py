"""`Pass`: the one shape of every graph rewrite.

A pass is a callable object: ``hoist_invariants(graph) -> int`` applies it and returns the
number of rewrites it made (0: the graph is unchanged). Each pass module defines one subclass
of `Pass` and exposes one instance of it under the module's name
(``passes.hoist_invariants.hoist_invariants``). The pipelines are named in `passes.pipelines`.
"""

from __future__ import annotations

import abc
from typing import ClassVar

from ..ir.clone import clone_graph
from ..ir.graph import Graph
from ..ir.loop import Loop

#: The parts every pass's class docstring states, in this order.
CONTRACT = ("Applies to:", "Returns:", "Guarantees:")


class Pass(abc.ABC):
    """A graph rewrite with an explicit contract.

    `name` is the module's (and the instance's) name. `in_place` says whether ``__call__``
    changes the graph it is given (True) or leaves it as it is (False); `run_pipeline`
    runs in-place passes only. Every pass walks into subgraphs (loop bodies, If branches) at
    any depth.

    A subclass's docstring is its contract, stated in three parts (checked when the class
    is defined): ``Applies to:`` which nodes it rewrites and when; ``Returns:`` what the
    count counts; ``Guarantees:`` what stays true of the graph and of its outputs' values
    (exactly, or up to rounding) and errors. A pass of a backend pipeline keeps both: the
    rewritten graph fails exactly where the original fails (`passes.pipelines`).
    """

    name: ClassVar[str]
    in_place: ClassVar[bool] = True

    def __init_subclass__(cls, abstract: bool = False, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if abstract:  # a shared base of passes, not a pass
            return
        doc = cls.__dict__.get("__doc__") or ""
        missing = [part for part in CONTRACT if part not in doc]
        if missing or "name" not in cls.__dict__:
            raise TypeError(f"pass {cls.__name__} needs a `name` and a docstring contract "
                            f"stating {', '.join(CONTRACT)} (missing: {missing})")

    @abc.abstractmethod
    def __call__(self, graph: Graph) -> int:
        """Apply the pass to `graph`; the number of rewrites made (see the class contract)."""

    def applicable(self, graph: Graph) -> bool:
        """Whether the pass would rewrite something in `graph` (changes nothing). This default
        applies it to a copy; passes with a cheaper test override it."""
        return self(clone_graph(graph)) > 0

    def __repr__(self) -> str:
        return f"<pass {self.name}>"


class LoopPass(Pass, abstract=True):
    """A pass that rewrites each canonical `Loop` on its own, innermost loops first: its
    ``rewrite_loop(graph, loop)`` treats one loop of `graph` and returns its count."""

    def __call__(self, graph: Graph) -> int:
        done = 0
        for node in list(graph.nodes):
            for g in node.subgraphs():
                done += self(g)
            if isinstance(node, Loop):
                done += self.rewrite_loop(graph, node)
        return done

    @abc.abstractmethod
    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        """Rewrite `loop`, a node of `graph` whose inner loops are already done."""
