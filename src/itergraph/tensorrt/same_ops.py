"""ONNX operators that are one TensorRT layer operation under another name, in one table.

Each row pairs an ONNX op with the element-wise, unary or activation operation of the same
meaning; activation rows also say which ONNX attribute is the layer's ``alpha`` or ``beta`` and
its ONNX default. The ONNX parser (`onnxparser.ops`) reads the table from ONNX to TensorRT
(`by_onnx`) and the layers' `lower` methods from TensorRT to ONNX (`by_trt`), so an op that maps one
to one is added to both directions by adding its row here. Operations that need more than a
rename (TensorRT's FLOOR_DIV, ISINF; ONNX's Max/Min/Pow/Softplus with their own importers;
composed activations such as GELU) are translated by code of their own in each direction.
"""

from __future__ import annotations

from dataclasses import dataclass

from .enums import ActivationType, ElementWiseOperation, UnaryOperation

Op = ElementWiseOperation | UnaryOperation | ActivationType


@dataclass(frozen=True)
class SameOp:
    onnx: str
    trt: Op
    # (ONNX attribute, layer field "alpha"/"beta", the ONNX default): activations only
    attrs: tuple[tuple[str, str, float], ...] = ()


def _rows(enum, pairs: str) -> list[SameOp]:
    out = []
    for pair in pairs.split():
        onnx, _, trt = pair.partition("=")
        out.append(SameOp(onnx, enum[trt]))
    return out


E, U, A = ElementWiseOperation, UnaryOperation, ActivationType

# "Onnx=TRT_NAME" for every row.
SAME_OPS: list[SameOp] = [
    *_rows(E, """Add=SUM Sub=SUB Mul=PROD Div=DIV Max=MAX Min=MIN Pow=POW And=AND Or=OR Xor=XOR
                 Equal=EQUAL Greater=GREATER Less=LESS"""),
    *_rows(U, """Exp=EXP Log=LOG Sqrt=SQRT Reciprocal=RECIP Abs=ABS Neg=NEG Sin=SIN Cos=COS
                 Tan=TAN Sinh=SINH Cosh=COSH Asin=ASIN Acos=ACOS Atan=ATAN Asinh=ASINH
                 Acosh=ACOSH Atanh=ATANH Ceil=CEIL Floor=FLOOR Erf=ERF Not=NOT Sign=SIGN
                 Round=ROUND IsNaN=ISNAN"""),
    *_rows(A, "Relu=RELU Sigmoid=SIGMOID Tanh=TANH Softsign=SOFTSIGN"),
    SameOp("LeakyRelu", A.LEAKY_RELU, (("alpha", "alpha", 0.01),)),
    SameOp("Elu", A.ELU, (("alpha", "alpha", 1.0),)),
    SameOp("ThresholdedRelu", A.THRESHOLDED_RELU, (("alpha", "alpha", 1.0),)),
    SameOp("HardSigmoid", A.HARD_SIGMOID, (("alpha", "alpha", 0.2), ("beta", "beta", 0.5))),
    SameOp("Selu", A.SELU, (("alpha", "alpha", 1.67326319217681884765625),
                            ("gamma", "beta", 1.05070102214813232421875))),
]

_BY_ONNX = {r.onnx: r for r in SAME_OPS}
_BY_TRT = {(type(r.trt), r.trt): r for r in SAME_OPS}


def by_onnx(op_type: str) -> SameOp | None:
    """The row of ONNX op `op_type`, or None when it is not a plain rename."""
    return _BY_ONNX.get(op_type)


def by_trt(op: Op) -> SameOp | None:
    """The row of TensorRT operation `op`, or None when it is not a plain rename."""
    return _BY_TRT.get((type(op), op))


def onnx_ops(kind: type) -> list[str]:
    """The ONNX ops whose row is an operation of enum `kind` (e.g. every `UnaryOperation`)."""
    return [r.onnx for r in SAME_OPS if isinstance(r.trt, kind)]
