"""CTC rules of the ``org.openvinotoolkit`` domain: CTCLoss (math in
`backends.common.ctc_loss`)."""

from __future__ import annotations

from ...common.ctc_loss import DOMAIN, ctc_loss
from ..table import lowering
from ._util import attr


@lowering("CTCLoss", domain=DOMAIN)
def _ctc_loss(cx, logits, logit_len, labels, label_len, blank=None):
    n = cx.node
    return ctc_loss(cx.xp, logits, logit_len, labels, label_len, blank,
                    bool(attr(n, "preprocess_collapse_repeated", 0)),
                    bool(attr(n, "ctc_merge_repeated", 1)), bool(attr(n, "unique", 0)))
