"""OpenVINO operations that are one ONNX operator under another name, in one table.

Each row pairs an ONNX op with the OpenVINO op of the same meaning (element-wise, no attributes
to translate), the OpenVINO opset that introduced it, and whether its output is boolean. The
importer and the exporter both register a translator for every row, so an element-wise op is
added to the OpenVINO format by adding its row here. Ops that need more than a rename (attributes,
variadic inputs, Python-style division, ...) have translators of their own in `ops.basic.read` and
`ops.basic.write`, registered after these and replacing them where both exist.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SameOp:
    onnx: str
    openvino: str
    opset: int  # the OpenVINO opset that introduced the op
    arity: int  # 1: unary, 2: binary with NumPy broadcasting
    boolean: bool = False  # the output is boolean whatever the input type


def _rows(arity: int, opset: int, pairs: str, boolean: bool = False) -> list[SameOp]:
    out = []
    for pair in pairs.split():
        onnx, _, ov = pair.partition("=")
        out.append(SameOp(onnx, ov or onnx, opset, arity, boolean))
    return out


# "Onnx=OpenVino" where the names differ, a single name where they agree.
SAME_OPS: list[SameOp] = [
    *_rows(1, 1, """Sigmoid Tanh Relu Exp Log Sqrt Abs Neg=Negative Floor Ceil=Ceiling Sin
                    Cos Tan Asin Acos Atan Sinh Cosh Erf Sign"""),
    *_rows(1, 1, "Not=LogicalNot", boolean=True),
    *_rows(1, 4, "Asinh Acosh Atanh Softplus=SoftPlus Mish HardSwish=HSwish"),
    *_rows(1, 9, "Softsign=SoftSign"),
    *_rows(1, 10, "IsNaN", boolean=True),
    *_rows(1, 13, "BitwiseNot"),
    *_rows(2, 1, "Add Sub=Subtract Mul=Multiply Max=Maximum Min=Minimum Pow=Power"),
    *_rows(2, 1, """Equal Less LessOrEqual=LessEqual Greater GreaterOrEqual=GreaterEqual
                    And=LogicalAnd Or=LogicalOr""", boolean=True),
    *_rows(2, 2, "Xor=LogicalXor", boolean=True),
    *_rows(2, 13, "BitwiseAnd BitwiseOr BitwiseXor"),
]
