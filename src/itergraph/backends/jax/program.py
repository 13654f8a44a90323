"""Running a graph on the JAX backend: one jitted function per input signature, split only
where XLA cannot go.

`CompiledGraph` holds what every run shares: the live top-level nodes, which values each
reads and defines, the large constants on the device, the plans (`planner`) and the NumPy
plans used after a `Bailout` (a run-time condition only NumPy handles: the whole run is redone
on the NumPy backend). A plan is a list of steps: `jit_step.JitStep` (top-level nodes traced
into one jitted function), `numpy_step.NumpyStep` (nodes run by the NumPy backend) and
`driver.DriverStep` (a top-level loop whose output length is only known at run time).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import ExecutionError, InputError, where
from ...ir import Graph, Loop
from ...ir.clone import clone_graph
from ...ir.traversal import needed_nodes
from ..common import progress
from ..common.memory import human_bytes
from . import config
from .big_constants import collect_big
from .context import Bailout, CompileCache
from .fast_call import build, signature
from .padded_calls import PaddedCalls
from .planner import Tail
from .records import Record
from .table import load_all

INT64_MAX = np.iinfo(np.int64).max
FAST_SIGNATURES = 64  # input signatures whose prepared call is kept


def _laid_out(graph: Graph) -> Graph:
    """`graph`, or a rewritten copy when a layout pass applies: `passes.gate_fission`
    (recurrent cells' gate splits become one product per gate: XLA's CPU code reads separate
    arrays much faster than column blocks of one) and `passes.carried_layout` (a tall, thin
    carried state is carried transposed, its long axis last, so XLA vectorises along it).
    The caller's graph is never changed."""
    from ...passes.pipelines import XLA_LAYOUT, rewritten_copy

    return rewritten_copy(XLA_LAYOUT, graph)


def _fused(graph: Graph) -> Graph | None:
    """A copy of `graph` whose recurrent-cell loops are fused (`passes.fuse_cells`: one
    ``RecurrentSequence`` node each), or None when there is none."""
    from ...passes.pipelines import XLA_FUSE, run_pipeline

    if not any(isinstance(n, Loop) for _, n in graph.walk()):
        return None
    copy = clone_graph(graph)
    return copy if run_pipeline(XLA_FUSE, copy) else None


def _hoisted(graph: Graph) -> Graph | None:
    """A copy of `graph` with the loop-invariant work of its loops moved out of them
    (`passes.hoist_invariants`, the one loop-invariant hoister of both backends: computed
    once, before the loop), or None when there is none. This runs after the layout passes,
    which leave invariant slices and transposes of weights in loop bodies for it.

    `passes.precompute_sliced` is not run: a scan batches the products of sliced pieces
    itself (`loops.batching`), with the shapes known while tracing, which the pass, working
    from declared types, often lacks."""
    from ...passes.pipelines import XLA_MOTION, run_pipeline

    if not any(isinstance(n, Loop) for _, n in graph.walk()):
        return None
    copy = clone_graph(graph)
    return copy if run_pipeline(XLA_MOTION, copy) else None



def _generation_lowered(graph: Graph) -> tuple[Graph, list[Record]]:
    """`generation.lowered`: ONNX Runtime's GreedySearch / BeamSearch as one XLA loop where
    the static analysis finds nothing against it (else the nodes run their NumPy kernels)."""
    from .analysis import node_problems
    from .generation import lowered

    return lowered(graph, node_problems)


def _check_unlowered(graph: Graph) -> None:
    """Refuse `graph` as the NumPy backend (and ONNX Runtime) do when a node that XLA cannot
    lower has no NumPy kernel either, even where nothing reads the node: the rewrites would
    drop such a dead node, and the model would run here and be refused there."""
    from ..numpy import CompileContext
    from ..numpy.plan import make_kernel
    from .table import lookup

    ctx = None
    for _, node in graph.walk():
        if isinstance(node, Loop) or lookup(node) is not None:
            continue
        ctx = ctx or CompileContext()
        make_kernel(node, ctx)

class CompiledGraph:
    """A graph prepared for the JAX backend. ``run(feeds)`` -> ``{output name: ndarray}``.

    `initial_capacity` is the buffer size (iterations) a run-time-length loop starts with
    before doubling; None (the default) picks it per loop from the declared size of its
    concatenated values (a 256 KiB buffer, 64 to 4096 iterations).

    The graph is compiled from a rewritten copy (`_fused`, `_laid_out`, `_hoisted`), which
    keeps the original's values and errors on every input (the pass contract,
    `passes.pipelines`): a run of it is the run of the original. `rewrite=False` compiles
    `graph` as it is; `fuse=False` leaves recurrent loops unfused.
    """

    def __init__(self, graph: Graph, initial_capacity: int | None = None,
                 rewrite: bool = True, fuse: bool = True):
        load_all()
        _check_unlowered(graph)
        self._padded = PaddedCalls(self, graph, lambda g: CompiledGraph(g, initial_capacity))
        self._generation: list[Record] = []  # generation.lowered's records
        if rewrite:
            graph, self._generation = _generation_lowered(graph)
            fused = _fused(graph) if fuse else None
            graph = _laid_out(graph if fused is None else fused)
            graph = _hoisted(graph) or graph
        self.graph = graph
        self.initial_capacity = None if initial_capacity is None else max(1, int(initial_capacity))
        self.nodes = needed_nodes(graph, graph.outputs)
        self.index = {id(n): i for i, n in enumerate(self.nodes)}
        self.cache = CompileCache()
        self.big = collect_big(graph)
        self._big_dev: dict[int, Any] = {}
        self._max_it_args: dict[Any, Any] = {}
        self._numpy_plans: dict[Any, Any] = {}
        # NumPy segments' plans by (start, end, max_iterations), shared by every re-plan so
        # that kernels holding state (OpenVINO's RandomUniform) keep it across runs
        self.segment_plans: dict[Any, Any] = {}
        self.bailouts = 0  # runs redone on NumPy (see `context.Bailout`)
        self.reads = [[v.uid for v in n.reads()] for n in self.nodes]
        self.defined_at: dict[int, int] = {}
        for i, n in enumerate(self.nodes):
            for v in n.outputs:
                self.defined_at[v.uid] = i
        self.input_specs = [(v.name, v.uid, v.const) for v in graph.inputs]
        self._input_uids = {v.uid for v in graph.inputs}
        self._out_uids = [v.uid for v in graph.outputs]
        self.root = Tail(self, 0)
        self._analysis: list[Record] | None = None
        self.feed_names = tuple(name for name, _, _ in self.input_specs)
        self._name_of = {uid: name for name, uid, _ in self.input_specs}
        self._fast: dict[tuple, Any] = {}  # signature -> `fast_call.FastCall` (or None)
        self.compiled_keys: set[tuple] = set()  # signatures a run has compiled
        self._promoted: tuple[int, tuple[str, ...]] = (0, ())  # (count, names): `_promoted_names`

    # ------------------------------------------------------------------ helpers for steps
    def live_in(self, a: int, b: int) -> list[int]:
        """uids read by nodes[a:b] (or graph outputs when b is the end) defined before a."""
        out: list[int] = []
        seen: set[int] = set()
        reads = [u for i in range(a, b) for u in self.reads[i]]
        if b == len(self.nodes):
            reads += self._out_uids
        for u in reads:
            d = self.defined_at.get(u)
            if u not in seen and (d is None or d < a):
                if d is None and u not in self._input_uids:
                    continue  # an initializer: resolved in the trace, never passed
                seen.add(u)
                out.append(u)
        return out

    def step_outputs(self, a: int, b: int) -> list[int]:
        """uids a step running nodes[a:b] hands on: read later, or (for the last step) the
        graph outputs it defines."""
        if b < len(self.nodes):
            return self.live_out(a, b)
        return [u for u in dict.fromkeys(self._out_uids) if self.defined_at.get(u, -1) >= a]

    def live_out(self, a: int, b: int) -> list[int]:
        """uids defined by nodes[a:b] that nodes[b:] or the graph outputs read."""
        later = {u for i in range(b, len(self.nodes)) for u in self.reads[i]}
        later.update(self._out_uids)
        return [v.uid for n in self.nodes[a:b] for v in n.outputs if v.uid in later]

    def max_it_arg(self, max_it: int | None):
        """The iteration limit as a device scalar (cached: no transfer per call)."""
        a = self._max_it_args.get(max_it)
        if a is None:
            a = config.jax().device_put(np.int64(INT64_MAX if max_it is None else max_it))
            if len(self._max_it_args) < 16:
                self._max_it_args[max_it] = a
        return a

    def big_args(self, uids: list[int]) -> tuple:
        jax = config.jax()
        out = []
        for u in uids:
            d = self._big_dev.get(u)
            if d is None:
                d = self._big_dev[u] = jax.device_put(self.big[u])
            out.append(d)
        return tuple(out)

    def promoted_names(self) -> tuple[str, ...]:
        """The names of the promoted inputs (`planner`), remade only when a run promotes one
        (the list only grows)."""
        n, names = self._promoted
        if n != len(self.root.promoted):
            names = tuple(self._name_of[u] for u in self.root.promoted)
            self._promoted = (len(names), names)
        return names

    # ------------------------------------------------------------------ public
    def signature(self, feeds: dict[str, Any], max_iterations: int | None) -> tuple | None:
        """The key runs of `feeds` are compiled under (None: not host arrays); a signature
        that runs padded (`padded_calls`) has its padded key."""
        promoted = self.promoted_names()
        key = signature(feeds, self.feed_names, promoted, max_iterations)
        if key is None or key in self.compiled_keys or not self.compiled_keys:
            return key
        return self._padded.key(key, feeds, max_iterations) or key

    def compiled_for(self, key: tuple | None) -> bool:
        """Has a run of this signature (`signature`) been compiled?"""
        if key is not None and key[0] == "padded":
            return self._padded.compiled_for(key)
        return key is not None and key in self.compiled_keys

    @property
    def compiled_signatures(self) -> int:
        """How many programs runs have compiled: one per signature, or per padded length
        (`padded_calls`)."""
        return len(self.compiled_keys) + self._padded.compiled_signatures

    def prepared_call(self, key: tuple | None):
        """The `fast_call.FastCall` of this signature, if there is one."""
        if key is not None and key[0] == "padded":
            return self._padded.prepared_call(key)
        return self._fast.get(key) if key is not None else None

    def run(self, feeds: dict[str, Any], max_iterations: int | None = None) -> dict[str, Any]:
        """Run on `feeds` (name -> array); returns name -> NumPy array in output order.

        A signature whose run is one compiled step is called directly from its second run on
        (`fast_call`); every other run goes through the planner."""
        if progress.active():  # compiled loops report when they finish: the planner's path
            return self._run(feeds, max_iterations)
        promoted = self.promoted_names()
        key = signature(feeds, self.feed_names, promoted, max_iterations)
        if key is None:
            return self._run(feeds, max_iterations)
        fast = self._fast.get(key, False)
        if fast:
            out = fast(feeds)
            if out is not None:
                return out
        elif key not in self.compiled_keys and self.compiled_keys:
            padded = self._padded.key(key, feeds, max_iterations)
            if padded is not None:
                return self._padded.run(padded, feeds, max_iterations)
        bailouts = self.bailouts
        out = self._run(feeds, max_iterations)
        if len(self.root.promoted) == len(promoted) and len(self.compiled_keys) < 4096:
            self.compiled_keys.add(key)
        if fast is False and len(self._fast) < FAST_SIGNATURES and self.bailouts == bailouts:
            if len(self.root.promoted) == len(promoted):  # else the key changed
                self._fast[key] = build(self, feeds, max_iterations)
        return out

    def _run(self, feeds: dict[str, Any], max_iterations: int | None) -> dict[str, Any]:
        env: dict[int, Any] = {}
        for name, uid, const in self.input_specs:
            if name in feeds:
                x = feeds[name]
            elif const is not None:
                x = const
            else:
                raise InputError(f"missing input '{name}'")
            if not (x is None or isinstance(x, (np.ndarray, list, tuple))
                    or isinstance(x, config.jax().Array)):  # placed (sharded) by the caller
                x = np.asarray(x)  # (sequences stay lists, an empty optional None)
            env[uid] = x
        static: dict[int, Any] = {}
        try:
            with config.x64():
                self.root.run(env, static, max_iterations)
        except Bailout:
            return self._numpy_run(feeds, max_iterations)
        out: dict[str, Any] = {}
        for v in self.graph.outputs:
            x = env.get(v.uid)
            if x is None and v.uid not in env:
                x = v.const
            if x is None or isinstance(x, (list, tuple)):
                out[v.name] = x
            elif isinstance(x, np.ndarray) and v.uid not in static:
                out[v.name] = x  # a feed passed through, or a fresh NumPy result
            else:  # device arrays and values shared with the plan: writable copies
                try:
                    out[v.name] = np.array(x)
                except MemoryError as e:
                    by = f"{where(v.producer)}: " if v.producer is not None else ""
                    raise ExecutionError(f"{by}output '{v.name}': out of memory copying it to "
                                         f"the host ({human_bytes(x.nbytes)}): {e}") from None
        return out

    def _numpy_run(self, feeds, max_iterations):
        """The whole run on the NumPy backend (after a `Bailout`)."""
        from ..numpy import CompileContext, run_plan

        plan = self._numpy_plans.get(max_iterations)
        if plan is None:
            plan = self._numpy_plans[max_iterations] = CompileContext(max_iterations).compile(
                self.graph)
        self.bailouts += 1
        return run_plan(plan, feeds)

    def explain(self) -> list[Record]:
        """Per element: does it compile, and how (or why not). After a run: what that run's
        plan did; before any run: a static analysis of the graph (shapes not known)."""
        from .generation import merged

        plan = self.root.last_plan
        if plan is None:
            from .analysis import analyze

            return merged(analyze(self.graph), self._generation)
        return merged(plan.records(), self._generation)

    @property
    def fully_compiled(self) -> bool:
        """True when the static analysis finds nothing that must fall back to NumPy."""
        if self._analysis is None:
            from .analysis import analyze

            self._analysis = analyze(self.graph)
        return all(r.compiles for r in self._analysis)
