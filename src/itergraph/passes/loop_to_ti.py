"""Loops rewritten into the form the OpenVINO writer writes as ``TensorIterator``
(the Model Optimizer's LoopToTI)."""

from __future__ import annotations

from ..analysis.loop_features import shape_varying
from ..ir.graph import Graph
from ..ir.loop import Loop
from .base import LoopPass
from .skip_report import SkipReport
from .slice_counted import count_by_slices, is_tensor_iterator_form


class LoopToTI(SkipReport, LoopPass):
    """Loops rewritten into the form the OpenVINO writer writes as ``TensorIterator``.

    Applies to: every canonical `Loop` at any depth not already in that form (sliced inputs and
    nothing but ports), whose condition never stops it (none, the condition input passed
    through, or a constant true; no precondition) and whose number of iterations is known before
    it runs (a constant trip count, possibly from static shapes, or sliced inputs of static
    length; a count known only at run time, such as ``Shape(x)[axis]``, may be 0, on which
    OpenVINO's TensorIterator fails: such a loop is written as ``Loop-5``). Row reads
    ``Gather(x, i)`` become sliced inputs (`iteration_gather`); sliced inputs longer than the
    count are cut to it (``Slice``); the iteration number becomes a sliced input over ``0..N-1``
    in its own type; trip count and condition go. A loop whose body holds a loop in
    TensorIterator form (at any depth) is left alone: OpenVINO refuses nested TensorIterators,
    and so is a loop with a carried value that changes shape between iterations (OpenVINO's
    TensorIterator keeps its first shape; ``Loop-5`` computes it). A loop whose body would read
    no sliced input (neither one it has, nor a row, nor the iteration number) is left alone:
    OpenVINO drops an unread sliced input of a TensorIterator, which then runs once. A loop
    whose iteration number would need a sliced constant of more than
    `slice_counted.MAX_STEPS_CONSTANT` entries (a trip count of 10**9) is left a loop too.

    Returns: the number of loops rewritten; `skipped` lists the loops left and why.

    Guarantees: every output keeps its value for every input the original runs without
    error. Gathers of rows may have become sliced inputs in a loop that is then skipped
    (an exact rewrite).
    """

    name = "loop_to_ti"
    in_place = True

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        if is_tensor_iterator_form(loop):
            return 0
        why = ""
        if any(isinstance(n, Loop) and is_tensor_iterator_form(n) for _, n in loop.body.walk()):
            why = "its body holds a TensorIterator (OpenVINO refuses nested ones)"
        why = why or _shape_changing(loop) or \
            count_by_slices(graph, loop, read_slice=True, known_count=True)
        if why:
            return self.skip(loop, why)
        return 1


def _shape_changing(loop: Loop) -> str:
    """Why OpenVINO's TensorIterator would compute `loop` wrongly: a carried value that
    changes shape between iterations (a tensor grown by ``Concat``) keeps its first shape
    there (its CPU plugin returns the last iteration's piece alone); "" when none does."""
    shaped = shape_varying(loop)
    names = [f"'{c.param.name}'" for c in loop.carried if c.param.uid in shaped]
    if names:
        return (f"carried value(s) {', '.join(names)} change shape between iterations "
                "(OpenVINO's TensorIterator keeps the first shape)")
    return ""


loop_to_ti = LoopToTI()
