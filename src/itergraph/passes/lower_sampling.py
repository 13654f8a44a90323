"""ONNX Runtime's ``com.microsoft.Sampling`` (decoder-only, ``model_type`` 0) as the greedy
lowering of `lower_generation` (the first step on the prompt, then a ``Loop`` over the
further tokens, the sequences a ``[batch, max_length]`` buffer) whose token is drawn instead
of taken by ``ArgMax``, as the NumPy kernel (`backends.numpy.kernels.gen_sampling`) draws
it::

    u = SamplingUniforms(input_ids, max_length, seed)      # [max_length - S, B] float64
    s = process(logits)                                     # as GreedySearch's lowering
    s = s / temperature                                     # when temperature != 1
    s[0, 0] -= ReduceSum(presence_mask * presence_penalty)  # ORT's quirk, when asked
    s = TopPFilter(s)        # 0 < top_p < 1: ORT's cumulate_and_filter (gen_sampling)
    token = count(cdf <= u[step]) with cdf the cumulative softmax of s in float64,
      normalised by its last element (NumPy's Generator.choice)

``SamplingUniforms`` and ``TopPFilter`` are ops of the domain ``itergraph`` (NumPy kernels in
`backends.numpy.kernels.gen_sampling`, JAX rules in `backends.jax.ops.sampling`); the first is
the uniform numbers NumPy's generator seeded by
``seed`` gives (`semantics.generation.sampling_uniforms`): a run's numbers only itergraph's
backends make, so this is not a pass of ``itergraph optimize`` (a file written with it would
run nowhere else); the JAX backend applies it (`backends.jax.generation`) to compile the
whole search as one XLA program. Tokens are the NumPy kernel's (ONNX Runtime's where one
candidate is left each step), up to the rounding of the float64 sums (XLA's summation order
is not NumPy's: a uniform number within that rounding of a boundary may pick the neighbour).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import where
from ..ir.builder import Builder
from ..ir.graph import Graph, Node, Value
from ..ir.types import DataType
from .lower_generation import F32, I64, MS, _check, _Lowering, _t

F64 = DataType.FLOAT64
DOMAIN = "itergraph"
UNIFORMS = "SamplingUniforms"


def is_sampling(node: Node) -> bool:
    return node.op_type == "Sampling" and node.domain == MS


def lower_sampling(graph: Graph, stepwise: bool = False) -> int:
    """Every top-level ``Sampling`` node of `graph` replaced by its lowering (in place);
    the number lowered. An `UnsupportedError` (graph unchanged) for a node it cannot lower:
    `lower_generation`'s refusals, ``custom=1``, the ``filtered_logits`` output.
    `stepwise`: the prompt read through the loop's step where that is provably the same
    (`LowerGeneration`)."""
    plans = [(n, _check(n, stepwise)) for n in graph.nodes if is_sampling(n)]
    for node, plan in plans:
        i = graph.nodes.index(node)
        graph.nodes[i:i + 1] = _SamplingLowering(graph, node, plan).build()
    return len(plans)


class _SamplingLowering(_Lowering):
    """The nodes that replace one Sampling node (module docstring)."""

    def __init__(self, graph: Graph, node: Node, plan: dict):
        super().__init__(graph, node, plan)
        a = node.attrs
        self.temperature = float(a.get("temperature", 1.0))
        self.top_p = float(a.get("top_p", 0.0))
        self.filter_value = float(a.get("filter_value", -np.inf))
        self.min_keep = int(a.get("min_tokens_to_keep", 1))
        self.presence_penalty = float(a.get("presence_penalty", 0.0))
        self.uniforms: Value | None = None

    def process(self, b: Builder, logits: Value, ids: Value, length: Value,
                first: bool) -> Value:
        s = super().process(b, logits, ids, length, first)
        o = self.outer
        if self.temperature != 1.0:
            s = b.node("Div", [s, o.const(np.float32(self.temperature), "temperature")],
                       type=_t(F32, [None, None]))
        pm = self.p["feeds"]["presence_mask"]
        if pm is not None and self.presence_penalty != 0.0:
            s = self.presence(b, s, pm)
        if 0.0 < self.top_p < 1.0:
            s = self.top_p_filter(b, s)
        return s

    def presence(self, b: Builder, s: Value, pm: Value) -> Value:
        """ONNX Runtime's presence penalty: the whole ``sum(presence_mask * penalty)`` (its
        first ``s.size`` elements) off the first score of the first row."""
        o = self.outer
        size = b.node("Size", [s])
        flat = b.node("Slice", [b.node("Reshape", [self.cast(b, pm, F32), o.i64([-1], "m1")]),
                                o.i64([0], "z"), b.unsqueeze(size, 0), o.i64([0], "a0")])
        total = b.node("ReduceSum", [b.node("Mul", [flat, o.const(np.float32(
            self.presence_penalty), "presence")])], {"keepdims": 0})
        rows, vocab = self.dim(b, s, 0), self.dim(b, s, 1)
        first_row = b.node("Equal", [b.node("Range", [o.i64(0, "z"), rows, o.i64(1, "one")],
                                            version=11), o.i64(0, "z")])
        first_col = b.node("Equal", [b.node("Range", [o.i64(0, "z"), vocab, o.i64(1, "one")],
                                            version=11), o.i64(0, "z")])
        at = b.node("And", [b.unsqueeze(first_row, 1), b.unsqueeze(first_col, 0)], version=7)
        return b.node("Where", [at, b.node("Sub", [s, total]), s], type=_t(F32, [None, None]))

    def top_p_filter(self, b: Builder, s: Value) -> Value:
        """ONNX Runtime's ``cumulate_and_filter`` of `s` (`gen_sampling.top_p_filter`), as
        the op ``TopPFilter`` (the JAX backend's rule needs no sort where the kept tokens are
        among the few largest)."""
        out = Value(b.fresh("top_p"), _t(F32, [None, None]))
        b.add("TopPFilter", [s], [out], {"top_p": self.top_p, "filter_value": self.filter_value,
                                        "min_tokens_to_keep": self.min_keep},
              domain=DOMAIN, version=1)
        return out

    def softmax64(self, b: Builder, s: Value) -> Value:
        """``softmax(s)`` along axis 1 in float64, as the NumPy kernel computes it."""
        s64 = self.cast(b, s, F64)
        top = b.node("ReduceMax", [s64, self.outer.i64([1], "a1")], {"keepdims": 1}, version=18)
        p = b.node("Exp", [b.node("Sub", [s64, top])])
        return b.node("Div", [p, b.node("ReduceSum", [p, self.outer.i64([1], "a1")],
                                        {"keepdims": 1})])

    def choose(self, b: Builder, scores: Value, step: Callable[[], Value]) -> Value:
        """The token drawn with the step's uniform number (`semantics.generation.draw`)."""
        o = self.outer
        if self.uniforms is None:  # first called on the prompt, in the node's graph
            f = self.p["feeds"]
            self.uniforms = o.add(UNIFORMS, [f["input_ids"], self.max_length, f["seed"]],
                                  [Value(o.fresh("uniforms"), _t(F64, [None, None]))],
                                  {"of": where(self.node)}, domain=DOMAIN,
                                  version=1).outputs[0]
        cdf = b.node("CumSum", [self.softmax64(b, scores), o.i64(1, "axis")], version=11)
        last = b.node("Slice", [cdf, o.i64([-1], "m1"), o.i64([np.iinfo(np.int64).max], "e"),
                                o.i64([1], "a1")])
        cdf = b.node("Div", [cdf, last])
        u = b.node("Gather", [self.uniforms, step()], {"axis": 0})               # [B]
        below = self.cast(b, b.node("LessOrEqual", [cdf, b.unsqueeze(u, 1)], version=16), I64)
        return b.node("ReduceSum", [below, o.i64([1], "a1")], {"keepdims": 0})
