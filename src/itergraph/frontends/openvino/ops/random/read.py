"""Translators of OpenVINO's random ops into ops of the ``org.openvinotoolkit`` domain, inputs
and attributes kept (element types as ONNX ``TensorProto`` numbers): ``RandomUniform-8``
(semantics in `backends.common.philox`; ``alignment="pytorch"``: `backends.common.mersenne`)
and ``Multinomial-13`` (`backends.common.multinomial`). ONNX's own RandomUniform and
Multinomial draw from other generators, so these stay OpenVINO ops."""

from __future__ import annotations

from .....errors import ModelError
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from .....ir.types import DataType
from ...builder import Builder, onnx_type
from ...elements import from_element_type
from ...import_table import importer
from ...netparse import Layer

_UNIFORM_TYPES = {DataType.FLOAT16, DataType.BFLOAT16, DataType.FLOAT32, DataType.FLOAT64,
                  DataType.INT32, DataType.INT64}
_ALIGNMENTS = ("tensorflow", "pytorch")


def _seed(layer: Layer, name: str) -> int:
    v = layer.int_attr(name, 0)
    if v < 0:
        raise ModelError(f"{layer.where()}: {name}={v} (must not be negative)")
    return v


@importer("RandomUniform", since=8)
def _random_uniform(b: Builder, layer: Layer, x):
    if len(x) != 3:
        raise ModelError(f"{layer.where()}: RandomUniform takes 3 inputs, got {len(x)}")
    dt = from_element_type(layer.attr("output_type", required=True), layer.where())
    if dt not in _UNIFORM_TYPES:
        raise ModelError(f"{layer.where()}: output_type {dt} is not one of f16, bf16, f32, "
                         "f64, i32, i64")
    alignment = (layer.attr("alignment", "tensorflow") or "tensorflow").lower()
    if alignment not in _ALIGNMENTS:
        raise ModelError(f"{layer.where()}: unknown alignment '{alignment}'")
    shape = b.to_i64(x[0])
    attrs = {"output_type": onnx_type(dt), "global_seed": _seed(layer, "global_seed"),
             "op_seed": _seed(layer, "op_seed"), "alignment": alignment}
    return b.op("RandomUniform", [shape, x[1], x[2]], attrs, dtype=dt, domain=DOMAIN)


@importer("Multinomial", since=13)
def _multinomial(b: Builder, layer: Layer, x):
    if len(x) != 2:
        raise ModelError(f"{layer.where()}: Multinomial takes 2 inputs, got {len(x)}")
    dt = from_element_type(layer.attr("convert_type", required=True), layer.where())
    if dt not in (DataType.INT32, DataType.INT64):
        raise ModelError(f"{layer.where()}: convert_type {dt} is not i32 or i64")
    attrs = {"convert_type": onnx_type(dt),
             "with_replacement": int(layer.bool_attr("with_replacement")),
             "log_probs": int(layer.bool_attr("log_probs")),
             "global_seed": _seed(layer, "global_seed"), "op_seed": _seed(layer, "op_seed")}
    return b.op("Multinomial", x, attrs, dtype=dt, domain=DOMAIN)
