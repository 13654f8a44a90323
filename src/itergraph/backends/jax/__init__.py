"""The compiled backend: whole graphs, loops included, lowered to XLA through JAX.

    from itergraph.backends import jax as jb
    if jb.available():
        cg = jb.compile_graph(graph)          # CompiledGraph; compiles lazily per input shapes
        outs = cg.run({"X": x})               # {output name: numpy array}
        for element, compiles, reason in jb.explain(graph):
            ...

A loop whose iteration count is known when compiling becomes ``lax.scan``; one that can
stop early becomes ``lax.while_loop`` (with output buffers that double when full, driven
from Python, when it has concatenated outputs). ``If`` becomes ``lax.cond``. Values known at
trace time (constants, shapes) are evaluated while tracing, so shape computations stay
static. What XLA cannot express falls back to the NumPy backend for that node, and
`explain` says which parts compile and why the others do not.

64-bit types are enabled only around this backend's own traces and calls (a thread-local
``jax.enable_x64`` context), never globally; see `config`. The persistent XLA compilation
cache is opt-in: `enable_compilation_cache(path)` or ``ITERGRAPH_JAX_CACHE_DIR``.

Rules for new ops go in `ops/` (one module per family), registered with
``@lowering("Op", since=N)`` into `LOWERINGS`.
"""

from __future__ import annotations

from typing import Any

from .config import available, enable_compilation_cache
from .table import LOWERINGS, Rule, lowering

__all__ = ["LOWERINGS", "CompiledGraph", "Record", "Rule", "available", "compile_graph",
           "enable_compilation_cache", "explain", "lowering", "run_graph"]


def compile_graph(graph, initial_capacity: int | None = None):
    """Prepare `graph` for the JAX backend (tracing and compiling happen on the first run
    for each input signature). `initial_capacity`: see `CompiledGraph`."""
    from .program import CompiledGraph

    return CompiledGraph(graph, initial_capacity=initial_capacity)


def run_graph(graph, feeds: dict[str, Any], max_iterations: int | None = None) -> dict:
    """Compile and run `graph` once."""
    return compile_graph(graph).run(feeds, max_iterations=max_iterations)


def explain(graph, feeds: dict[str, Any] | None = None) -> list:
    """``[(element, compiles, reason), ...]`` for the top-level nodes and the loops/Ifs
    inside them. Without `feeds`: a static analysis (no shapes known). With `feeds`: the
    graph is compiled and run once on them and the records say what that run did."""
    from .program import CompiledGraph

    if feeds is None:
        from .analysis import analyze

        return analyze(graph)
    cg = CompiledGraph(graph)
    cg.run(feeds)
    return cg.explain()


def __getattr__(name):
    if name == "CompiledGraph":
        from .program import CompiledGraph

        return CompiledGraph
    if name == "Record":
        from .records import Record

        return Record
    raise AttributeError(name)
