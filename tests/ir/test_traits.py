"""ir.traits against the world: ONNX's own op schemas and what the NumPy backend computes.

Each row of the table is a claim about its ops; these tests run every op of a row through a
one-node ONNX model and check the claim, so a misplaced op makes one of them fail.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as h

import itergraph as ig
from itergraph.ir import Node
from itergraph.ir import traits as traits_module
from itergraph.ir.traits import ELEMENTWISE, TRAITS, Trait, has, ops_with, traits
from itergraph.ir.types import DataType

OPSET = 21

# The element type a test feeds an op, first allowed one wins (floats where the op takes them).
PREFERRED = [("tensor(float)", TensorProto.FLOAT), ("tensor(bool)", TensorProto.BOOL),
             ("tensor(int32)", TensorProto.INT32), ("tensor(int64)", TensorProto.INT64),
             ("tensor(uint8)", TensorProto.UINT8)]

ATTRS = {
    "Cast": {"to": TensorProto.FLOAT},
    "Mod": {"fmod": 1},  # required for floating-point inputs
    "BitShift": {"direction": "LEFT"},
}


def schema(op: str) -> onnx.defs.OpSchema:
    return onnx.defs.get_schema(op, OPSET)  # the models below are built at OPSET


def input_type(op: str, i: int) -> int:
    """The ONNX element type to feed formal input `i` of `op` (the last for variadic ones)."""
    s = schema(op)
    formal = s.inputs[min(i, len(s.inputs) - 1)]
    allowed = {formal.type_str}
    for c in s.type_constraints:
        if c.type_param_str == formal.type_str:
            allowed = set(c.allowed_type_strs)
    for name, code in PREFERRED:
        if name in allowed:
            return code
    raise AssertionError(f"{op}: no test element type among {sorted(allowed)}")


def sample(code: int, shape, rng, positive=False, low=0.0) -> np.ndarray:
    """Random values: booleans, small integers (>= 1 when `positive`), or floats in
    ``low + (0.1, 0.9)``."""
    dtype = DataType.from_onnx(code).numpy
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(1 if positive else 0, 4, shape).astype(dtype)
    return (rng.random(shape) * 0.8 + 0.1 + low).astype(dtype)


def run_op(op: str, inputs: list[np.ndarray], **attrs) -> list[np.ndarray]:
    """Run `op` alone in an ONNX model on the NumPy backend."""
    names = [f"x{i}" for i in range(len(inputs))]
    infos = [h.make_tensor_value_info(n, DataType.from_numpy(a.dtype).onnx, a.shape)
             for n, a in zip(names, inputs)]
    n_out = 1
    node = h.make_node(op, names, [f"y{i}" for i in range(n_out)],
                       **{**ATTRS.get(op, {}), **attrs})
    g = h.make_graph([node], op, infos, [h.make_empty_tensor_value_info("y0")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", OPSET)], ir_version=10)
    out = ig.load(m).run(dict(zip(names, inputs)), backend="numpy")
    return [np.asarray(v) for v in out.values()]


def rows() -> dict[Trait, list[str]]:
    return {t: ops.split() for t, ops in traits_module._ROWS.items()}


# --- the table itself -----------------------------------------------------------------------


def test_every_op_is_a_real_onnx_op():
    unknown = sorted(op for op in TRAITS if not onnx.defs.has(op))
    assert unknown == []


def test_every_op_appears_in_one_row_only():
    names = [op for ops in rows().values() for op in ops]
    twice = sorted({op for op in names if names.count(op) > 1})
    assert twice == []
    assert len(names) == len(TRAITS)


def test_other_domains_have_no_traits():
    assert traits("Add") == Trait.PURE | Trait.BROADCAST
    assert Node("Add", domain="ai.onnx").domain == ""  # the IR's one spelling
    assert traits("Add", "com.microsoft") == Trait.NONE
    assert traits("NoSuchOp") == Trait.NONE
    node = Node("Relu", domain="")
    assert has(node, Trait.PURE | Trait.UNARY) and not has(node, Trait.BROADCAST)


def test_elementwise_is_unary_or_broadcast():
    assert ops_with(Trait.UNARY) | ops_with(Trait.BROADCAST) == {
        op for op, t in TRAITS.items() if t & ELEMENTWISE}


# --- UNARY: element-wise on one tensor ------------------------------------------------------


@pytest.mark.parametrize("op", sorted(ops_with(Trait.UNARY)))
def test_unary_op_keeps_its_input_shape_and_works_element_by_element(op):
    rng = np.random.default_rng(0)
    x = sample(input_type(op, 0), (2, 3), rng, low=1.0 if op == "Acosh" else 0.0)
    (y,) = run_op(op, [x])
    assert y.shape == x.shape
    # Element-wise: permuting the elements of the input permutes those of the output alike.
    perm = rng.permutation(x.size)
    (y_perm,) = run_op(op, [x.ravel()[perm].reshape(3, 2)])
    np.testing.assert_array_equal(y_perm.ravel(), y.ravel()[perm])


# --- BROADCAST: element-wise after NumPy broadcasting ---------------------------------------


def broadcast_inputs(op: str, rng) -> list[np.ndarray]:
    if op == "Where":
        return [sample(input_type(op, 0), (2, 1), rng), sample(input_type(op, 1), (3,), rng),
                sample(input_type(op, 2), (3,), rng)]
    return [sample(input_type(op, 0), (2, 1), rng),
            sample(input_type(op, 1), (3,), rng, positive=op in ("Div", "Mod"))]


@pytest.mark.parametrize("op", sorted(ops_with(Trait.BROADCAST) - {"PRelu"}))
def test_broadcast_op_broadcasts_2x1_and_3_to_2x3(op):
    rng = np.random.default_rng(1)
    ins = broadcast_inputs(op, rng)
    (y,) = run_op(op, ins)
    assert y.shape == (2, 3)
    (full,) = run_op(op, [np.ascontiguousarray(np.broadcast_to(a, (2, 3))) for a in ins])
    np.testing.assert_array_equal(y, full)


def test_prelu_slope_broadcasts_to_x():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    for slope in (rng.random((3,)).astype(np.float32), rng.random((2, 1)).astype(np.float32)):
        (y,) = run_op("PRelu", [x, slope])
        assert y.shape == (2, 3)
        np.testing.assert_allclose(y, np.where(x < 0, x * slope, x))


# --- REDUCTION: folds axes ------------------------------------------------------------------


@pytest.mark.parametrize("op", sorted(ops_with(Trait.REDUCTION)))
def test_reduction_op_reduces(op):
    rng = np.random.default_rng(3)
    x = sample(input_type(op, 0), (2, 3), rng)
    (all_axes,) = run_op(op, [x])
    assert all_axes.shape == (1, 1)
    (flat,) = run_op(op, [x], keepdims=0)
    assert flat.shape == ()
    (rows_,) = run_op(op, [x, np.array([1], np.int64)])
    assert rows_.shape == (2, 1)


# --- SHAPE_ONLY: values never matter --------------------------------------------------------


@pytest.mark.parametrize("op", sorted(ops_with(Trait.SHAPE_ONLY)))
def test_shape_only_op_ignores_values(op):
    a = np.zeros((2, 3), np.float32)
    b = np.arange(6, dtype=np.float32).reshape(2, 3) + 7
    (ya,), (yb,) = run_op(op, [a]), run_op(op, [b])
    np.testing.assert_array_equal(ya, yb)
    (yc,) = run_op(op, [np.zeros((4, 3), np.float32)])
    assert not np.array_equal(ya, yc)  # but the shape does


# --- RANDOM: never pure ---------------------------------------------------------------------


@pytest.mark.parametrize("op", sorted(ops_with(Trait.RANDOM)))
def test_random_op_is_not_pure(op):
    assert Trait.PURE not in traits(op)
    assert "seed" in schema(op).attributes


def test_every_onnx_op_with_a_seed_is_random():
    seeded = {s.name for s in onnx.defs.get_all_schemas() if "seed" in s.attributes
              and s.domain == "" and s.name in TRAITS}
    assert seeded == ops_with(Trait.RANDOM)


def test_pure_ops_are_neither_random_nor_control_flow():
    for op, t in TRAITS.items():
        if Trait.PURE in t:
            assert not t & (Trait.RANDOM | Trait.CONTROL_FLOW), op


def test_control_flow_ops_hold_subgraphs():
    for op in ops_with(Trait.CONTROL_FLOW):
        graph_attrs = [a for a in schema(op).attributes.values()
                       if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)]
        assert graph_attrs, op


def test_reduction_ops_are_the_reduce_ops():
    assert ops_with(Trait.REDUCTION) == {op for op in TRAITS if re.fullmatch(r"Reduce\w+", op)}


# --- SAME_SHAPE: the output has the first input's shape -------------------------------------

SAME_SHAPE_ATTRS = {"GroupNormalization": {"num_groups": 3}, "LRN": {"size": 3}}
#: shapes for the inputs after the first where an op needs them to tell its output's shape
OTHER_SHAPES = {"ReverseSequence": (3,), "GroupNormalization": (3,)}


def _same_shape_model(op: str) -> onnx.ModelProto:
    s = schema(op)
    required = [f for f in s.inputs[1:]
                if f.option != onnx.defs.OpSchema.FormalParameterOption.Optional]
    names = ["x"] + [f"i{k}" for k in range(1, len(required) + 1)]
    infos = [h.make_tensor_value_info("x", input_type(op, 0), [2, 3, 4])] + [
        h.make_tensor_value_info(n, input_type(op, k), OTHER_SHAPES.get(op))
        for k, n in enumerate(names[1:], 1)]
    node = h.make_node(op, names, ["y"], **{**ATTRS.get(op, {}), **SAME_SHAPE_ATTRS.get(op, {})})
    g = h.make_graph([node], op, infos, [h.make_empty_tensor_value_info("y")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", OPSET)], ir_version=10)


@pytest.mark.parametrize("op", sorted(ops_with(Trait.SAME_SHAPE)))
def test_same_shape_op_gives_the_shape_of_its_first_input(op):
    """ONNX's shape inference as the oracle; where it has none (``GroupNormalization``),
    ONNX Runtime's result."""
    m = _same_shape_model(op)
    out = onnx.shape_inference.infer_shapes(m, strict_mode=True).graph.output[0].type
    if out.tensor_type.HasField("shape"):
        dims = [d.dim_value if d.HasField("dim_value") else None
                for d in out.tensor_type.shape.dim]
        assert dims == [2, 3, 4]
        return
    import onnxruntime as ort

    rng = np.random.default_rng(4)
    feeds = {i.name: sample(i.type.tensor_type.elem_type,
                            [d.dim_value for d in i.type.tensor_type.shape.dim], rng)
             for i in m.graph.input}
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, feeds)[0].shape == (2, 3, 4)


def test_unary_ops_keep_their_shape():
    assert ops_with(Trait.UNARY) <= ops_with(Trait.SAME_SHAPE)


# --- RESHAPE: the same elements in the same order -------------------------------------------

RESHAPE_OPERANDS = {"Reshape": [np.array([3, 2], np.int64)],
                    "Unsqueeze": [np.array([0], np.int64)]}


@pytest.mark.parametrize("op", sorted(ops_with(Trait.RESHAPE)))
def test_reshape_op_keeps_the_elements_in_order(op):
    """Against ONNX Runtime: the output's elements, read in order, are the input's."""
    import onnxruntime as ort

    x = np.arange(6, dtype=np.float32).reshape(2, 3, 1)
    ins = [x, *RESHAPE_OPERANDS.get(op, [])]
    names = [f"x{i}" for i in range(len(ins))]
    infos = [h.make_tensor_value_info(n, DataType.from_numpy(a.dtype).onnx, a.shape)
             for n, a in zip(names, ins)]
    g = h.make_graph([h.make_node(op, names, ["y"])], op, infos,
                     [h.make_empty_tensor_value_info("y")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", OPSET)], ir_version=10)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, dict(zip(names, ins)))
    np.testing.assert_array_equal(y.ravel(), x.ravel())
    assert y.shape != x.shape or op == "Identity"
