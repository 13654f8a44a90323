"""Lowering the canonical `Loop` (see `itergraph.ir.loop` for its meaning) to XLA loops.

Three forms, chosen while tracing:

- **scan**: the iteration count is known at trace time (a constant trip count, the slice
  count of a sliced input) and nothing can stop the loop early (no condition, or one that is
  statically true, no precondition). Sliced inputs become ``xs`` (axis moved to the front,
  pieces gathered, reversed for negative strides), concatenated outputs ``ys`` that are
  reversed/moved/merged/padded afterwards, carried values the carry.
- **while**: a condition, a precondition or a run-time trip count, and no concatenated
  output: ``lax.while_loop`` over (iteration, condition, carried values, last values).
- **driver**: as *while*, with concatenated outputs, whose length is only known at run time.
  XLA needs static shapes, so such a loop runs (at the top level of a graph only) as a jitted
  step per buffer capacity: the step fills a buffer per output and stops when the buffer is
  full; the Python `LoopDriver` then resumes from the carried state with a buffer twice as
  large (no iteration runs twice; one compilation per capacity). Inside another loop or a
  branch such a loop cannot be expressed and `CannotLower` sends the enclosing top-level node
  to NumPy.

A carried value that grows by a Concat of itself every iteration (a K/V cache) changes shape,
which no XLA loop carry may; `growing` carries it as a fixed-capacity buffer with a valid
length when every read of it can be made exact (its rule table), sized from the scan's
count; for a loop that can stop early, from its bound when that is known when compiling
(at most `growing.BOUNDED_MAX`) and the grown values do not leave the loop (a plain
*while*: the generation loops), else per driver step (a run-time-length loop with such a
value then runs as *driver*, its buffers extended with the step's capacity). Otherwise the
loop lowers as before.

Loop-invariant work is moved out of loop bodies before tracing, by the IR pass
`passes.hoist_invariants` (see `program`). A scan batches what reads no carried value but
changes per iteration (`batching.BatchPlan`): matrix products such as ``x_t W`` and recurrent
cells' input projections are computed for all iterations at once, before it.

Zero iterations follow the NumPy backend exactly: carried outputs are the initial values,
concatenated outputs are empty with the body's declared element shape (unknown dims as 0),
and a last value that is neither carried nor loop-invariant is an `ExecutionError`. A body
that cannot be traced for the shapes it is given (an axis beyond a rank only the run shows)
does not stop a loop that runs zero iterations, as it does not in ONNX Runtime: its error is
raised at run time when the first iteration runs (`untraced_body`).
`max_iterations` is a traced argument: while loops stop when they reach it and the runner
raises `IterationLimitError` naming the loop; a scan longer than the limit raises as well.

Modules, by job: `info` (what a loop's ports mean, independent of shapes), `setup` (its
inputs resolved for one trace), `body` (tracing one iteration), `batching` (products batched
over a scan's iterations), `scan` and `while_loop` (the two XLA forms), `outputs`
(finishing the outputs), `growing` (grown carried values as buffers), `messages` (error
texts shared with the driver), `untraced_body` (a body that cannot be traced), `lowering`
(choosing the form: the rule registered for ``Loop``).
"""

#: The `Loop` flags this lowering acts on (`ir.loop.loop_flags`: every one, in `setup`).
HANDLES_LOOP_FLAGS = frozenset({"negative_trip_count", "strict_slices", "equal_slices"})
IGNORES_LOOP_FLAGS: dict[str, str] = {}
