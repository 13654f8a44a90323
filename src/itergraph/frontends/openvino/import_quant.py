"""Translators of OpenVINO quantisation ops with no ONNX counterpart: ``FakeQuantize-1``
becomes ``FakeQuantize`` of the ``org.openvinotoolkit`` domain (the op OpenVINO's own ONNX
frontend reads; semantics in `backends.common.fake_quantize`), inputs and ``levels`` kept."""

from __future__ import annotations

from ...errors import ModelError
from ...ir.traits import OPENVINO_DOMAIN as DOMAIN
from .builder import Builder
from .import_ops import _check_broadcast, out_dtype
from .import_table import importer
from .netparse import Layer


@importer("FakeQuantize", since=1)
def _fake_quantize(b: Builder, layer: Layer, x):
    _check_broadcast(layer)
    levels = layer.int_attr("levels", required=True)
    if levels < 2:
        raise ModelError(f"{layer.where()}: levels={levels} (at least 2)")
    if len(x) != 5:
        raise ModelError(f"{layer.where()}: FakeQuantize takes 5 inputs, got {len(x)}")
    return b.op("FakeQuantize", x, {"levels": levels}, dtype=out_dtype(layer, x),
                domain=DOMAIN)
