"""Per-step values of loop body tensors: the names that address them (`names`), the transform
that exposes them as graph outputs (`mark`), running a graph on one engine (`engines`), the
trace itself (`trace`) and its file format (`trace_file`); `state_step` turns a stateful
model into one step from the state it holds.

Below `itergraph.model` (``Model.trace`` is `trace.trace`) and below the tools of
`itergraph.inspect` that compare and draw traces.
"""
