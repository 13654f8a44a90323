"""Translators of OpenVINO ops with no ONNX counterpart into ops of the
``org.openvinotoolkit`` domain (the domain OpenVINO's own ONNX frontend reads), inputs and
attributes kept: ``FakeQuantize-1`` (semantics in `backends.common.fake_quantize`) and
``GatherTree-1`` (`backends.common.gather_tree`) and ``Inverse-14``
(`backends.common.inverse`)."""

from __future__ import annotations

from .....errors import ModelError
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from ...builder import Builder
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import _check_broadcast, out_dtype


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


@importer("GatherTree", since=1)
def _gather_tree(b: Builder, layer: Layer, x):
    if len(x) != 4:
        raise ModelError(f"{layer.where()}: GatherTree takes 4 inputs, got {len(x)}")
    return b.op("GatherTree", x, dtype=out_dtype(layer, x), domain=DOMAIN)


@importer("Inverse", since=14)
def _inverse(b: Builder, layer: Layer, x):
    if len(x) != 1:
        raise ModelError(f"{layer.where()}: Inverse takes 1 input, got {len(x)}")
    return b.op("Inverse", x, {"adjoint": int(layer.bool_attr("adjoint"))},
                dtype=out_dtype(layer, x), domain=DOMAIN)
