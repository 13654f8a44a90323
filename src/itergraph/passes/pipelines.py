"""The named pipelines: which passes run, in which order, and the one runner.

`NUMPY`: what the NumPy backend applies to a copy of each loop before compiling it:

1. `passthrough_condition`: a condition that passes the condition input through is dropped;
2. `iteration_gather`: ``Gather(data, iteration number)`` becomes a sliced input;
3. `fuse_cells`: a loop whose body is a recurrent cell becomes one fused
   ``RecurrentSequence`` node;
4. `hoist_invariants`: loop-invariant body nodes move out of the loop;
5. `precompute_sliced`: computation on sliced inputs runs once over the whole inputs.

`XLA` = `XLA_FUSE`, `XLA_LAYOUT` then `XLA_MOTION`: what the JAX backend applies to a copy
of the graph, before tracing. `XLA_FUSE`:

1. `fuse_cells`, as for NumPy, first (the layout passes below would respell the cells).

`XLA_LAYOUT`, where a pass applies:

2. `split_sequence_reads`, `sequence_scan_outputs` then `static_sequences`: reads of a
   tensor split into a sequence read the tensor, a list appended to in a loop and then
   concatenated becomes a scan output, and reads of a list of known values read the values
   (XLA has no sequence type);
3. `gate_fission`: recurrent cells' gate splits become one product per gate (XLA's CPU code
   reads separate arrays much faster than column blocks of one);
4. `carried_layout`: a tall, thin carried state is carried transposed, its long axis last, so
   XLA vectorises along it.

`XLA_MOTION`:

5. `hoist_invariants`, the one loop-invariant hoister of both backends. `precompute_sliced` is
   not in it: a JAX scan batches the products of sliced pieces itself
   (`backends/jax/loops/batching.py`), with the shapes known while tracing.

`OPENVINO_WRITE`: what the OpenVINO IR writer applies to a copy of the graph before writing
it: `lower_generation` first (ONNX Runtime's ``GreedySearch``, which IR has no op for,
becomes standard ops and a loop; what it cannot lower stays an `UnsupportedError` naming
the feature), then `ragged_scan_joins` (a scan output split and joined again, whose pieces
may change length, grown as a carried tensor: OpenVINO's Loop returns such pieces stacked
wrong), then (IR has no sequence type) `split_sequence_reads`, `sequence_scan_outputs`,
`static_sequences`, then
`iteration_gather`, which makes the per-iteration ``Gather`` of a row (the first pass writes
``SequenceAt(SplitToSequence(x), i)`` so) a sliced input, then `loop_to_ti`: a loop with a
known count and a condition that never stops it is written as a TensorIterator (the Model
Optimizer's LoopToTI).

The contract of these pipelines: a rewritten graph keeps the original's values *and errors*
on every input. Where the original runs, the copy runs and gives its outputs (up to the
rounding each pass states); where the original fails, the copy fails with the same error
class (`errors`; the text may differ). So the backends run the rewritten copy and never
retry a run on the original. The passes that would break this are built not to: work moved
out of a loop (`hoist_invariants`, `precompute_sliced`) runs before the loop tests whether it
runs, so only work that cannot raise moves out of a loop that may run zero times
(`loop_entry`), and a fused recurrent cell runs zero steps as its loop runs zero iterations
(`fuse_cells`). Each pass states what it keeps in its contract (`passes.base.Pass`). Two
passes keep the error of a join of an empty sequence on the backends only
(`split_sequence_reads` through its ``itergraph.NonEmpty`` guard, `sequence_scan_outputs`
through its port's `empty_error`); the OpenVINO IR cannot hold either, and the IR written
gives an empty tensor there.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..errors import ModelError
from ..ir.clone import clone_graph
from ..ir.graph import Graph
from ..ir.verifier import verify as verify_graph
from .base import Pass
from .carried_layout import carried_layout
from .cells import fuse_cells
from .gate_fission import gate_fission
from .hoist_invariants import hoist_invariants
from .iteration_gather import iteration_gather
from .loop_to_ti import loop_to_ti
from .lower_generation import lower_generation
from .passthrough_condition import passthrough_condition
from .precompute_sliced import precompute_sliced
from .ragged_scan_joins import ragged_scan_joins
from .sequence_scan_outputs import sequence_scan_outputs
from .sequence_tensors import sequence_tensors
from .sequence_tensors_unconditional import sequence_tensors_unconditional
from .split_sequence_reads import split_sequence_reads
from .static_sequences import static_sequences

NUMPY: tuple[Pass, ...] = (passthrough_condition, iteration_gather, fuse_cells,
                           hoist_invariants, precompute_sliced)
XLA_FUSE: tuple[Pass, ...] = (fuse_cells,)
#: the part of `XLA_LAYOUT` that removes sequences (the JAX backend's static analysis,
#: `explain`, looks at the graph after it, as the compiled program does)
XLA_SEQUENCES: tuple[Pass, ...] = (split_sequence_reads, sequence_scan_outputs,
                                   static_sequences, sequence_tensors_unconditional)
XLA_LAYOUT: tuple[Pass, ...] = XLA_SEQUENCES + (gate_fission, carried_layout)
XLA_MOTION: tuple[Pass, ...] = (hoist_invariants,)
XLA: tuple[Pass, ...] = XLA_FUSE + XLA_LAYOUT + XLA_MOTION
OPENVINO_WRITE: tuple[Pass, ...] = (lower_generation, ragged_scan_joins, split_sequence_reads,
                                    sequence_scan_outputs, static_sequences, sequence_tensors,
                                    iteration_gather, loop_to_ti)

#: When this environment variable is set (to anything but "" or "0"), `run_pipeline`
#: verifies the graph after every pass; the test suite sets it.
VERIFY_ENV = "ITERGRAPH_VERIFY_PASSES"


def verifying() -> bool:
    """Whether `run_pipeline` verifies after every pass when not told (see `VERIFY_ENV`)."""
    return os.environ.get(VERIFY_ENV, "") not in ("", "0")


def run_pipeline(pipeline: Sequence[Pass], graph: Graph, verify: bool | None = None) -> int:
    """Apply the passes of `pipeline` to `graph` in place, in order; the total number of
    rewrites (0: the graph is unchanged).

    With `verify` (default: `verifying()`), `ir.verify` checks the graph after every pass and
    a failure names the pass. Values the graph reads from an enclosing scope before the
    first pass (a loop compiled on its own reads its inputs so) count as defined; a pass that
    makes it read a new one fails the check.
    """
    if verify is None:
        verify = verifying()
    outer = graph.captures() if verify else []
    total = 0
    for p in pipeline:
        if not p.in_place:
            raise ValueError(f"{p!r} does not work in place: run_pipeline cannot run it")
        total += p(graph)
        if verify:
            try:
                verify_graph(_with_inputs(graph, outer))
            except ModelError as e:
                raise ModelError(f"the graph is invalid after pass {p.name}: {e}") from e
    return total


def _with_inputs(graph: Graph, outer: list) -> Graph:
    """A view of `graph` that also takes the values `outer` as inputs (shares everything)."""
    if not outer:
        return graph
    return Graph(graph.name, inputs=[*outer, *graph.inputs], outputs=graph.outputs,
                 nodes=graph.nodes, initializers=graph.initializers,
                 opset_imports=graph.opset_imports)


def rewritten_copy(pipeline: Sequence[Pass], graph: Graph) -> Graph:
    """`graph` itself when no pass of `pipeline` applies to it, else a copy rewritten by the
    passes that apply (in order); the caller's graph is never changed."""
    todo = [p for p in pipeline if p.applicable(graph)]
    if not todo:
        return graph
    copy = clone_graph(graph)
    run_pipeline(todo, copy)
    return copy
