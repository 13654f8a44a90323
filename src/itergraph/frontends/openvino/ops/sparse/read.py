"""Translator of OpenVINO's ``SparseFillEmptyRows-16`` into the ``org.openvinotoolkit``
``SparseFillEmptyRows`` (semantics in `backends.common.sparse_fill`), inputs kept."""

from __future__ import annotations

from .....errors import ModelError
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from .....ir.types import DataType, TensorType
from ...builder import Builder, dtype_of
from ...import_table import importer
from ...netparse import Layer


@importer("SparseFillEmptyRows", since=16)
def _sparse_fill_empty_rows(b: Builder, layer: Layer, x):
    if len(x) != 4:
        raise ModelError(f"{layer.where()}: SparseFillEmptyRows takes 4 inputs, got {len(x)}")
    outs = b.op("SparseFillEmptyRows", x, outputs=3, domain=DOMAIN)
    for v, dt in zip(outs, (dtype_of(x[2]), dtype_of(x[0]), DataType.BOOL)):
        v.type = TensorType(dt, None)
    return outs
