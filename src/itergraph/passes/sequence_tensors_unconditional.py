"""`sequence_tensors` in the form a compiler takes: lists appended to at every iteration only."""

from __future__ import annotations

from .sequence_tensors import SequenceTensors


class SequenceTensorsUnconditional(SequenceTensors):
    """Lists appended to at every iteration, passed on and finally joined become their
    joined tensor; a list appended to inside an ``If`` stays a list.

    Applies to: what `SequenceTensors` applies to, but for sets that pass through an ``If``
    (a conditional append), whose tensor would grow by a length known only at run time,
    which a compiler's conditional (XLA's: one shape per branch output) cannot return.

    Returns: the number of such sets rewritten.

    Guarantees: those of `SequenceTensors`, on the sets rewritten.
    """

    name = "sequence_tensors_unconditional"

    def __init__(self):
        super().__init__(through_if=False)


sequence_tensors_unconditional = SequenceTensorsUnconditional()
