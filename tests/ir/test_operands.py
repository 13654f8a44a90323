"""ir.operands against ONNX's op schemas: every shape operand names an input of the op that
holds a shape, axes, a count or sizes, and the scalar ones are those ONNX describes as scalars."""

from __future__ import annotations

import onnx
import pytest

from itergraph.ir.operands import SCALAR_OPERANDS, SHAPE_OPERANDS, vector_operands

#: the names ONNX gives inputs that decide an output's shape
SHAPE_NAMES = {"axes", "shape", "repeats", "split", "K", "starts", "ends", "steps", "pads",
               "start", "limit", "delta", "depth", "scales", "sizes", "input"}


@pytest.mark.parametrize("op", sorted(SHAPE_OPERANDS))
def test_shape_operands_are_inputs_of_the_op_that_hold_shapes(op):
    inputs = onnx.defs.get_schema(op).inputs
    for i in SHAPE_OPERANDS[op]:
        assert i < len(inputs), f"{op} has no input {i}"
        assert inputs[i].name in SHAPE_NAMES, f"{op} input {i} is '{inputs[i].name}'"


@pytest.mark.parametrize("op", sorted(SHAPE_OPERANDS))
def test_vector_operands_are_the_ones_onnx_does_not_call_scalars(op):
    inputs = onnx.defs.get_schema(op).inputs
    scalar = {i for i in SHAPE_OPERANDS[op] if inputs[i].description.lower().startswith("scalar")}
    assert scalar == set(SCALAR_OPERANDS.get(op, ()))
    assert set(vector_operands(op)) == set(SHAPE_OPERANDS[op]) - scalar
