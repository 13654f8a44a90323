"""The export table: ONNX op (and canonical Loop) -> translator writing OpenVINO layers.

A translator is ``fn(w: NetWriter, node: Node, ins: list[Out | None]) -> list[Out] | Out``:
`ins` are the ports carrying the node's inputs (``None`` for an omitted optional input); it
appends layers through `w` and returns one port per node output. Registration follows ONNX
versions (``@exporter("Softmax", since=13)``), so an op read under an older opset with other
semantics gets its own translator. The translator modules (the ``write*.py`` modules of each
op family in `ops`) register when imported: `writer` loads them through `ops.load`.
"""

from __future__ import annotations

from ...registry import OpTable

EXPORTERS = OpTable("openvino export")
exporter = EXPORTERS.register

