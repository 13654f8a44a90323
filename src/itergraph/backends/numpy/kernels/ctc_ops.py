"""Kernel of the ``org.openvinotoolkit`` ``CTCLoss`` (math in `backends.common.ctc_loss`)."""

from __future__ import annotations

import numpy as np

from ....ir.attributes import attr
from ...common.ctc_loss import DOMAIN, ctc_loss
from . import kernel


@kernel("CTCLoss", domain=DOMAIN)
def _ctc_loss(node, ctx):
    flags = (bool(attr(node, "preprocess_collapse_repeated", 0)),
             bool(attr(node, "ctc_merge_repeated", 1)), bool(attr(node, "unique", 0)))

    def fn(logits, logit_len, labels, label_len, blank=None):
        args = [np.asarray(a) for a in (logits, logit_len, labels, label_len)]
        with np.errstate(divide="ignore", invalid="ignore"):  # -inf log-probabilities
            return np.asarray(ctc_loss(np, *args, None if blank is None else np.asarray(blank),
                                       *flags))

    return fn
