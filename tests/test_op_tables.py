"""The op tables agree with the traits table: forgetting one entry when adding an op fails here.

Adding an element-wise op touches its trait row (`ir/traits.py`), its NumPy kernel, its JAX
lowering and, when OpenVINO has it under another name, its row in
`frontends/openvino/same_ops.py` (README, "Adding an op"). An op that is one TensorRT
element-wise, unary or activation operation has its row in `tensorrt/same_ops.py`, which the
TensorRT-style ONNX parser and the lowering both read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from onnx import TensorProto, helper

import itergraph.frontends.openvino.ops as ov_ops
import itergraph.network as trt
from itergraph.backends.jax.table import LOWERINGS
from itergraph.backends.jax.table import load_all as load_jax
from itergraph.backends.numpy.kernels import KERNELS
from itergraph.backends.numpy.kernels import load_all as load_numpy
from itergraph.frontends.openvino.export_table import EXPORTERS
from itergraph.frontends.openvino.import_table import IMPORTERS
from itergraph.frontends.openvino.same_ops import SAME_OPS
from itergraph.ir.traits import ELEMENTWISE, Trait, ops_with, traits
from itergraph.tensorrt.enums import ActivationType, ElementWiseOperation, UnaryOperation
from itergraph.tensorrt.onnxparser.registry import IMPORTERS as TRT_IMPORTERS
from itergraph.tensorrt.same_ops import SAME_OPS as TRT_SAME_OPS
from itergraph.tensorrt.same_ops import by_trt

load_numpy()
load_jax()
import itergraph.frontends.openvino.reader  # noqa: E402,F401  (registers the importers)
import itergraph.frontends.openvino.writer  # noqa: E402,F401  (registers the exporters)

NATIVE = sorted(ops_with(Trait.UNARY) | ops_with(Trait.BROADCAST) | ops_with(Trait.REDUCTION)
                | ops_with(Trait.CELL) | ops_with(Trait.SHAPE_ONLY))


@pytest.mark.parametrize("op", NATIVE)
def test_numpy_kernel_for_every_elementwise_reduction_cell_and_shape_op(op):
    assert KERNELS.lookup(op) is not None, f"{op} has traits but no NumPy kernel"


@pytest.mark.parametrize("op", NATIVE)
def test_jax_lowering_for_every_elementwise_reduction_cell_and_shape_op(op):
    assert LOWERINGS.lookup(op) is not None, f"{op} has traits but no JAX lowering"


@pytest.mark.parametrize("row", SAME_OPS, ids=lambda r: r.onnx)
def test_same_ops_rows_are_elementwise_and_registered_both_ways(row):
    assert traits(row.onnx) & ELEMENTWISE, f"{row.onnx} has no element-wise trait row"
    assert IMPORTERS.lookup(row.openvino, row.opset) is not None
    assert EXPORTERS.lookup(row.onnx) is not None


def test_every_openvino_op_family_folder_is_in_the_one_list():
    # A family folder left out of `ops.FAMILIES` would never register its translators.
    root = Path(ov_ops.__file__).parent
    folders = {p.name for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(ov_ops.FAMILIES)


def test_every_openvino_translator_module_is_loaded():
    # Every module of a family folder is a reader, a writer or a helper one of them imports,
    # so after the reader and the writer load, none is left unimported.
    root = Path(ov_ops.__file__).parent
    names = {f"{ov_ops.__name__}.{p.parent.name}.{p.stem}" for p in root.glob("*/*.py")
             if p.stem != "__init__"}
    assert not sorted(n for n in names if n not in sys.modules)


def test_openvino_ops_load_refuses_an_unknown_direction():
    with pytest.raises(ValueError, match="direction"):
        ov_ops.modules("both")


# -- the TensorRT emulator: `tensorrt/same_ops.py` read both ways -----------------------------


# TensorRT operations that are not one ONNX op (translated by code of their own).
TRT_COMPOSED = {ElementWiseOperation.FLOOR_DIV, UnaryOperation.ISINF, ActivationType.CLIP,
                ActivationType.SOFTPLUS, ActivationType.SCALED_TANH, ActivationType.GELU_ERF,
                ActivationType.GELU_TANH}


def _trt_layer(net, x, op):
    if isinstance(op, ElementWiseOperation):
        return net.add_elementwise(x, x, op)
    if isinstance(op, UnaryOperation):
        return net.add_unary(x, op)
    return net.add_activation(x, op)


def _trt_input_type(op):
    boolean = op in (ElementWiseOperation.AND, ElementWiseOperation.OR,
                     ElementWiseOperation.XOR, UnaryOperation.NOT)
    return (trt.bool, TensorProto.BOOL) if boolean else (trt.float32, TensorProto.FLOAT)


@pytest.mark.parametrize("op", [*ElementWiseOperation, *UnaryOperation, *ActivationType],
                         ids=str)
def test_every_tensorrt_operation_has_a_row_or_is_composed(op):
    assert (by_trt(op) is not None) != (op in TRT_COMPOSED), op


@pytest.mark.parametrize("row", TRT_SAME_OPS, ids=lambda r: r.onnx)
def test_tensorrt_same_ops_rows_lower_to_their_onnx_op(row):
    net = trt.Builder(trt.Logger()).create_network()
    x = net.add_input("x", _trt_input_type(row.trt)[0], (2, 3))
    layer = _trt_layer(net, x, row.trt)
    for _, field, default in row.attrs:
        setattr(layer, field, default)
    net.mark_output(layer.get_output(0))
    ops = [n.op_type for n in net.to_graph().nodes]
    assert ops == [row.onnx], ops
    assert traits(row.onnx) or KERNELS.lookup(row.onnx) is not None


@pytest.mark.parametrize("row", TRT_SAME_OPS, ids=lambda r: r.onnx)
def test_tensorrt_same_ops_rows_import_to_their_layer(row):
    assert row.onnx in TRT_IMPORTERS
    elem = _trt_input_type(row.trt)[1]
    arity = 2 if isinstance(row.trt, ElementWiseOperation) else 1
    names = ["a", "b"][:arity]
    model = helper.make_model(
        helper.make_graph([helper.make_node(row.onnx, names, ["y"])], "g",
                          [helper.make_tensor_value_info(n, elem, [2, 3]) for n in names],
                          [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)]),
        opset_imports=[helper.make_opsetid("", 18)])
    net = trt.Builder(trt.Logger()).create_network()
    parser = trt.OnnxParser(net, trt.Logger())
    assert parser.parse(model.SerializeToString()), [parser.get_error(i).desc()
                                                     for i in range(parser.num_errors)]
    layers = [net.get_layer(i) for i in range(net.num_layers)]
    if isinstance(row.trt, ActivationType):
        for layer in layers:
            if layer.type is trt.LayerType.ACTIVATION:
                layer.__class__ = trt.IActivationLayer  # Polygraphy's cast to the interface
        kinds = [getattr(layer, "type", None) for layer in layers]
    else:
        kinds = [getattr(layer, "op", None) for layer in layers]
    assert row.trt in kinds, kinds
    for name, field, default in row.attrs:
        layer = layers[kinds.index(row.trt)]
        assert getattr(layer, field) == pytest.approx(default), (name, field)
