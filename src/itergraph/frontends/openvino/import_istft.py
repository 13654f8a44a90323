"""Translator of OpenVINO's ``ISTFT-16`` into ``ISTFT`` of the ``org.openvinotoolkit``
domain, inputs (``data``, ``window``, ``frame_size``, ``frame_step``[, ``signal_length``]) and
attributes (``center``, ``normalized``) kept; semantics in `backends.common.istft`. ONNX has
no inverse STFT op, and OpenVINO's ONNX frontend reads none either."""

from __future__ import annotations

from ...errors import ModelError
from ...ir.traits import OPENVINO_DOMAIN as DOMAIN
from .builder import Builder
from .import_ops import out_dtype
from .import_table import importer
from .netparse import Layer


@importer("ISTFT", since=16)
def _istft(b: Builder, layer: Layer, x):
    if len(x) not in (4, 5):
        raise ModelError(f"{layer.where()}: ISTFT takes 4 or 5 inputs, got {len(x)}")
    dt = out_dtype(layer, x)
    ins = [x[0], b.cast(x[1], dt)] + [b.to_i64(v) for v in x[2:]]
    attrs = {"center": int(layer.bool_attr("center")),
             "normalized": int(layer.bool_attr("normalized"))}
    return b.op("ISTFT", ins, attrs, dtype=dt, domain=DOMAIN)
