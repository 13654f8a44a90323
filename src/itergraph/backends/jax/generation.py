"""ONNX Runtime's ``GreedySearch`` / ``BeamSearch`` / ``Sampling`` (decoder-only,
``model_type`` 0) on the JAX backend: lowered by `passes.lower_generation` (Sampling:
`passes.lower_sampling`, its uniform numbers drawn by a host callback) to a ``Loop`` over the
tokens whose one decoder step also reads the prompt, a token a step, where the decoder is
provably causal (`passes.decoder_positions`; else a first step on the whole prompt, then the
``Loop`` over the further tokens), which the backend compiles as one XLA loop, its K/V
caches and attention mask carried as fixed-capacity buffers (`loops.growing`; ONNX Runtime's
``Attention`` reads them by `loops.padded_attention`).

The lowering is kept only when nothing in what it builds keeps it from compiling (the static
analysis of `explain`, given as `problems`); otherwise, or where the pass refuses the node,
the graph is left as it is and the node runs its NumPy kernel, which matches ONNX Runtime, and
a record says why. What the static analysis cannot see (shapes known only when tracing) is
reported by the run's own records, as for any loop.
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import UnsupportedError, where
from ...ir import Graph, Node
from ...ir.clone import clone_graph
from ...passes.lower_generation import lower_generation_stepwise, lowered_op
from ...passes.lower_sampling import is_sampling, lower_sampling
from .records import Record

KERNEL = "runs its NumPy kernel (ONNX Runtime's tokens)"


def lowered(graph: Graph, problems: Callable[[Graph, Node], list[str]]
            ) -> tuple[Graph, list[Record]]:
    """(`graph` with its generation nodes lowered, records saying so) when every node the
    lowering builds compiles by `problems(graph, node)` (what keeps a top-level node from
    compiling); else (`graph` unchanged, a record per generation node saying why it runs its
    NumPy kernel). `graph` is never changed."""
    nodes = [n for _, n in graph.walk() if lowered_op(n) or is_sampling(n)]
    if not nodes:
        return graph, []
    nested = [n for n in nodes if n not in graph.nodes]
    if nested:
        return graph, [Record(where(n), False, f"{KERNEL}: not lowered, as {where(nested[0])} "
                                               "is inside a subgraph") for n in nodes]
    copy = clone_graph(graph)
    try:
        lower_generation_stepwise(copy)
        lower_sampling(copy, stepwise=True)
    except UnsupportedError as e:
        return graph, [Record(where(n), False, f"{KERNEL}: {e}") for n in nodes]
    before = {n.name for n in graph.nodes}
    built = [n for n in copy.nodes if n.name not in before]
    why = [p for n in built for p in problems(copy, n)]
    if why:
        return graph, [Record(where(n), False, f"{KERNEL}: lowered to standard ops "
                                                f"(lower-generation), it would not compile as "
                                                f"one XLA loop: {why[0]}") for n in nodes]
    return copy, [Record(where(n), True, f"lowered to standard ops (lower-generation): "
                                         f"{_form(copy, n)}") for n in nodes]


def _form(lowered: Graph, node: Node) -> str:
    """How `node` was lowered into `lowered`: with or without a first step of its own."""
    prefix = node.name or node.op_type  # the lowering names values "<prefix>/first/..."
    if any("/first/" in v.name and v.name.startswith(prefix)
           for m in lowered.nodes for v in m.outputs if v is not None):
        return "the first step on the prompt, then one XLA loop over the further tokens"
    return "one XLA loop over the tokens, the prompt read through its decoder step"


def merged(records: list[Record], notes: list[Record]) -> list[Record]:
    """`notes` first, then `records` less those of the same elements."""
    said = {r.element for r in notes}
    return [*notes, *(r for r in records if r.element not in said)]
