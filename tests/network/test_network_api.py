"""The TensorRT-shaped surface: names, aliases, tensors, naming of the built graph."""

from __future__ import annotations

import numpy as np
import pytest
from net_helpers import assert_outputs, const, i32, new_network, output, run, run_ort

import itergraph as ig
import itergraph.network as trt
from itergraph import tensorrt as frontend


def test_itergraph_network_reexports_the_frontend():
    for name in frontend.__all__:
        assert getattr(trt, name) is getattr(frontend, name)
    assert trt.ILoop is trt.Loop and trt.INetworkDefinition is trt.Network
    assert trt.Dims([2, 3]) == (2, 3) and trt.bool is trt.DataType.BOOL


def test_tensorrt_style_construction():
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input(name="x", dtype=trt.float32, shape=trt.Dims([2, 2]))
    w = net.add_constant(shape=(2, 2), weights=trt.Weights(np.eye(2, dtype=np.float32) * 3))
    mm = net.add_matrix_multiply(x, trt.MatrixOperation.NONE, w.get_output(0),
                                 trt.MatrixOperation.NONE)
    assert mm.type is trt.LayerType.MATRIX_MULTIPLY
    assert mm.num_inputs == 2 and mm.num_outputs == 1 and mm.get_input(1) is w.get_output(0)
    mm.name = "mm"
    net.mark_output(mm.get_output(0))
    xv = np.array([[1, 2], [3, 4]], np.float32)
    out = run(net, {"x": xv})
    np.testing.assert_array_equal(list(out.values())[0], xv * 3)


def test_names_in_the_built_graph():
    net = new_network()
    x = net.add_input("x", trt.float32, (2, 3))
    loop = net.add_loop()
    loop.name = "my_loop"
    loop.add_trip_limit(i32(net, 2), trt.TripLimit.COUNT)
    it = loop.add_iterator(x)
    it.get_output(0).name = "row"
    a = net.add_activation(it.get_output(0), trt.ActivationType.RELU)
    a.name = "relu"
    a.get_output(0).name = "x"  # clashes with the input's name: renamed in the IR
    lo = loop.add_loop_output(a.get_output(0), trt.LoopOutput.CONCATENATE)
    lo.set_input(1, i32(net, 2))
    output(net, lo.get_output(0), "y")
    output(net, x, "x")  # an input marked as output keeps its name
    g = net.to_graph()
    assert [v.name for v in g.inputs] == ["x"] and [v.name for v in g.outputs] == ["y", "x"]
    (node,) = g.nodes
    assert node.name == "my_loop" and node.body.inputs[0].name == "row"
    (relu,) = node.body.nodes
    assert relu.name == "relu" and relu.outputs[0].name != "x"
    xv = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    want = {"y": np.maximum(xv, 0), "x": xv}
    assert_outputs(run(net, {"x": xv}), want)
    assert_outputs(run_ort(net, {"x": xv}), want)


def test_save_as_onnx(tmp_path):
    net = new_network()
    x = net.add_input("x", trt.float32, (3,))
    output(net, net.add_unary(x, trt.UnaryOperation.EXP).get_output(0), "y")
    path = tmp_path / "net.onnx"
    ig.save(ig.load(net), str(path))
    xv = np.array([0, 1, 2], np.float32)
    np.testing.assert_allclose(ig.load(str(path)).run({"x": xv})["y"], np.exp(xv), rtol=1e-6)


def test_foreign_tensor_rejected():
    a, b = new_network(), new_network()
    xa = a.add_input("x", trt.float32, (2,))
    with pytest.raises(ig.ModelError, match="another network"):
        b.add_identity(xa)
    layer = a.add_identity(xa)
    assert layer.get_input(3) is None and layer.get_output(1) is None  # TensorRT: None
    with pytest.raises(ig.ModelError, match="no input 3"):
        layer.set_input(3, xa)


def test_constant_weights_must_fill_the_shape():
    with pytest.raises(ig.ModelError, match="do not fill"):
        new_network().add_constant((2, 3), np.zeros(5, np.float32))
    assert const(new_network(), np.zeros((2, 3), np.float32)).shape == (2, 3)


def test_every_layer_class_lowers_itself():
    # one way to lower a layer: its `lower` method; the loop and conditional boundaries are
    # emitted with their loop or conditional
    from itergraph.tensorrt.control import (
        ConditionLayer,
        IfConditionalBoundaryLayer,
        LoopBoundaryLayer,
    )
    from itergraph.tensorrt.core import Layer, LayerView

    def subclasses(c):
        for s in c.__subclasses__():
            yield s
            yield from subclasses(s)

    boundary = (ConditionLayer, IfConditionalBoundaryLayer, LoopBoundaryLayer, LayerView)
    concrete = [c for c in set(subclasses(Layer)) if not c.__abstractmethods__]
    assert len(concrete) > 40
    missing = [c.__name__ for c in concrete
               if not issubclass(c, boundary) and c.lower is Layer.lower]
    assert not missing, missing
