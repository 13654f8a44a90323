"""Kernel of OpenVINO's ``ISTFT`` (domain ``org.openvinotoolkit``; math in
`backends.common.istft`)."""

from __future__ import annotations

import numpy as np

from ....ir.attributes import attr
from ...common.istft import DOMAIN, istft, scalars
from . import kernel


@kernel("ISTFT", domain=DOMAIN)
def _istft(node, ctx):
    center, normalized = bool(attr(node, "center", 0)), bool(attr(node, "normalized", 0))

    def run(data, window, frame_size, frame_step, signal_length=None):
        fs, step, length = scalars(node, frame_size, frame_step, signal_length)
        return np.asarray(istft(np, data, window, fs, step, length, center, normalized))
    return run
