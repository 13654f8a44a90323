"""The import table: OpenVINO layer type and opset -> translator producing ONNX-standard IR nodes.

A translator is ``fn(b: Builder, layer: Layer, inputs: list[Value]) -> list[Value] | Value``:
it reads the layer's attributes (``layer.data``) and port types, emits nodes through `b`, and
returns one IR value per output port of the layer, in port order. Registration follows the
op's OpenVINO version: ``@importer("Softmax", since=8)`` serves layers declared
``version="opset8"`` and later opsets (an OpenVINO file names the opset where the op version
was introduced). The translator modules (the ``read*.py`` modules of each op family in `ops`)
register when imported: `reader` loads them through `ops.load`.
"""

from __future__ import annotations

from ...registry import OpTable

IMPORTERS = OpTable("openvino import")
importer = IMPORTERS.register

