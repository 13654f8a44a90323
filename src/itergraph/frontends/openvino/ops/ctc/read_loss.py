"""Translator of OpenVINO's ``CTCLoss-4`` into the ``org.openvinotoolkit`` ``CTCLoss``
(semantics in `backends.common.ctc_loss`), inputs and attributes kept."""

from __future__ import annotations

from .....errors import ModelError
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from ...builder import Builder
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype


@importer("CTCLoss", since=4)
def _ctc_loss(b: Builder, layer: Layer, x):
    if len(x) not in (4, 5):
        raise ModelError(f"{layer.where()}: CTCLoss takes 4 or 5 inputs, got {len(x)}")
    attrs = {k: int(layer.bool_attr(k, default)) for k, default in
             (("preprocess_collapse_repeated", False), ("ctc_merge_repeated", True),
              ("unique", False))}
    return b.op("CTCLoss", x, attrs, dtype=out_dtype(layer, x), domain=DOMAIN)
