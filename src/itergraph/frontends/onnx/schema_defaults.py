"""The attribute defaults of ONNX's operator schemas, as IR values (`ir.defaults`'s source).

A node of version N has the defaults of the schema in force at opset N (its domain's); a
node with no version, those of the newest schema. An attribute the op gained after N has its
newest default at N too: ONNX adds attributes whose default keeps the older meaning
(``Reshape``'s ``allowzero`` 0, ``Shape``'s ``start`` 0), but for the coordinates of
``Resize`` 10 and ``RoiAlign`` 10 (`OLDER_MEANING`). Ops ONNX holds no schema for have none.
"""

from __future__ import annotations

from typing import Any

import onnx

from .attributes import attr_from_onnx

#: (op, attribute) -> what a version without the attribute computes, where the default the
#: op gained it with is another: Resize 10 computes as Upsample (``asymmetric``), RoiAlign
#: 10 shifts no half pixel on its input (``output_half_pixel``)
OLDER_MEANING = {("Resize", "coordinate_transformation_mode"): "asymmetric",
                 ("RoiAlign", "coordinate_transformation_mode"): "output_half_pixel"}


def schema_defaults(domain: str, op_type: str, version: int | None) -> dict[str, Any]:
    """``{attribute: default}`` of `op_type` in `domain` at opset `version`."""
    try:
        newest = onnx.defs.get_schema(op_type, domain)
    except onnx.defs.SchemaError:
        return {}
    out = _defaults(newest)
    if version is not None and version < newest.since_version:
        try:
            schema = onnx.defs.get_schema(op_type, version, domain)
        except onnx.defs.SchemaError:  # older than the op: its first schema's are the newest
            return out
        out.update(_defaults(schema))
        out.update({a: v for (op, a), v in OLDER_MEANING.items()
                    if op == op_type and a not in schema.attributes and not domain})
    return out


def _defaults(schema) -> dict[str, Any]:
    return {name: attr_from_onnx(a.default_value, lambda g: None)
            for name, a in schema.attributes.items() if a.default_value.name}
