"""Translators of OpenVINO's string-tensor ops into ops of the ``org.openvinotoolkit`` domain
(semantics in `backends.common.string_tensors`): ``StringTensorUnpack-15`` (3 outputs:
begins and ends int32, symbols uint8) and ``StringTensorPack-15``. ONNX has string tensors
but no op that splits them into bytes or builds them from bytes, so these stay OpenVINO ops."""

from __future__ import annotations

from .....errors import ModelError
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from .....ir.types import DataType, TensorType
from ...builder import Builder, dtype_of
from ...import_table import importer
from ...netparse import Layer


@importer("StringTensorUnpack", since=15)
def _unpack(b: Builder, layer: Layer, x):
    if len(x) != 1:
        raise ModelError(f"{layer.where()}: StringTensorUnpack takes 1 input, got {len(x)}")
    if dtype_of(x[0]) not in (None, DataType.STRING):
        raise ModelError(f"{layer.where()}: StringTensorUnpack takes a string tensor, got "
                         f"{dtype_of(x[0])}")
    outs = b.op("StringTensorUnpack", x, outputs=3, domain=DOMAIN)
    for v, dt in zip(outs, (DataType.INT32, DataType.INT32, DataType.UINT8)):
        v.type = TensorType(dt, None)
    return outs


@importer("StringTensorPack", since=15)
def _pack(b: Builder, layer: Layer, x):
    if len(x) != 3:
        raise ModelError(f"{layer.where()}: StringTensorPack takes 3 inputs, got {len(x)}")
    for port, v in enumerate(x[:2]):
        if dtype_of(v) not in (None, DataType.INT32, DataType.INT64):
            raise ModelError(f"{layer.where()}: input {port} must be i32 or i64, got "
                             f"{dtype_of(v)}")
    if dtype_of(x[2]) not in (None, DataType.UINT8):
        raise ModelError(f"{layer.where()}: symbols (input 2) must be u8, got {dtype_of(x[2])}")
    return b.op("StringTensorPack", x, dtype=DataType.STRING, domain=DOMAIN)
