"""The network API as TensorRT 10's Python bindings define it: pybind-style enums, ILayer and
ITensor semantics, Dims classes, Logger, the builder objects and their engine-building calls.
Expected values are TensorRT's (NvInfer.h enum values, the bindings' documented behaviour)."""

from __future__ import annotations

import numpy as np
import pytest
from net_helpers import const, ew, i32, new_network, output

import itergraph as ig
import itergraph.network as trt

E = trt.ElementWiseOperation


def test_enums_are_int_convertible_like_pybind_enums():
    assert int(trt.TripLimit.COUNT) == 0 and int(trt.TripLimit.WHILE) == 1
    assert trt.DataType(0) is trt.DataType.FLOAT and trt.DataType(8) is trt.DataType.INT64
    assert trt.DataType.FLOAT.value == 0 and trt.DataType.FLOAT.name == "FLOAT"
    assert str(trt.DataType.FLOAT) == "DataType.FLOAT"
    assert int(trt.LayerType.MATRIX_MULTIPLY) == 17 and int(trt.LayerType.LOOP_OUTPUT) == 29
    assert int(trt.ReduceOperation.NONE) == 5 and int(trt.FillOperation.RANDOM_NORMAL) == 2
    assert trt.float32 is trt.DataType.FLOAT and trt.DataType.HALF.itemsize == 2
    assert trt.DataType.INT4.itemsize == 0.5
    assert {m: int(v) for m, v in trt.ActivationType.__members__.items()}["GELU_TANH"] == 13
    # arithmetic enums (flags) combine as integers
    assert 1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED) == 2
    assert 1 << trt.BuilderFlag.FP16 | 1 << trt.BuilderFlag.INT8 == 3
    assert trt.nptype(trt.int32) is np.int32
    with pytest.raises(TypeError):
        trt.nptype(trt.bfloat16)


def test_layer_type_and_network_indexing_as_polygraphy_walks_them():
    net = new_network()
    x = net.add_input("x", trt.float32, (2, 3))
    act = net.add_activation(x, trt.ActivationType.SIGMOID)
    net.add_matrix_multiply(act.get_output(0), trt.MatrixOperation.NONE, x,
                            trt.MatrixOperation.TRANSPOSE)
    assert act.type is trt.ActivationType.SIGMOID  # IActivationLayer.type
    assert [layer.type for layer in net] == [trt.LayerType.ACTIVATION,
                                            trt.LayerType.MATRIX_MULTIPLY]
    layer = net[0]
    assert isinstance(layer, trt.ILayer) and layer.type is trt.LayerType.ACTIVATION
    assert net.get_layer(1).type is trt.LayerType.MATRIX_MULTIPLY and net[-1] == net[1]
    assert net.get_layer(5) is None and len(net) == net.num_layers == 2
    layer.__class__ = trt.IActivationLayer  # Polygraphy's cast to the concrete interface
    assert layer.type is trt.ActivationType.SIGMOID and layer.alpha == 0.0
    layer.name = "sig"
    assert act.name == "sig" and layer.get_output(0) is act.get_output(0)
    with pytest.raises(IndexError):
        net[2]


def test_inputs_outputs_out_of_range_give_none():
    net = new_network()
    x = net.add_input("x", trt.float32, (2,))
    layer = net.add_identity(x)
    assert layer.get_input(1) is None and layer.get_output(1) is None
    assert layer.get_input(-1) is None
    assert net.get_input(3) is None and net.get_output(0) is None


def test_recurrence_counts_its_inputs_as_set():
    net = new_network()
    loop = net.add_loop()
    rec = loop.add_recurrence(i32(net, 0))
    assert rec.num_inputs == 1 and rec.get_input(1) is None
    rec.set_input(1, ew(net, rec.get_output(0), i32(net, 1), E.SUM))
    assert rec.num_inputs == 2
    lo = loop.add_loop_output(rec.get_output(0), trt.LoopOutput.CONCATENATE, 0)
    assert lo.num_inputs == 1
    lo.set_input(1, i32(net, 3))
    assert lo.num_inputs == 2
    assert isinstance(rec, trt.ILoopBoundaryLayer) and rec.loop is loop
    cond = net.add_if_conditional()
    inp = cond.add_input(i32(net, 1))
    assert isinstance(inp, trt.IIfConditionalBoundaryLayer) and inp.conditional is cond


def test_default_layer_names_are_tensorrts():
    net = new_network()
    x = net.add_input("x", trt.float32, (2, 2))
    mm = net.add_matrix_multiply(x, trt.MatrixOperation.NONE, x, trt.MatrixOperation.NONE)
    sm = net.add_softmax(x)
    cond = net.add_if_conditional()
    cond.set_condition(const(net, np.array(True)))
    o = cond.add_output(x, x)
    assert mm.name == "(Unnamed Layer* 0) [Matrix Multiply]"
    assert sm.name == "(Unnamed Layer* 1) [Softmax]"
    assert o.name.endswith("[Output]") and o.get_output(0).name == f"{o.name}_output"


def test_is_shape_tensor_follows_tensorrts_rules():
    net = new_network()
    x = net.add_input("x", trt.float32, (-1, 6))
    dims = net.add_input("dims", trt.int32, (2,))
    doubled = ew(net, dims, const(net, np.array([1, 1], np.int32)), E.PROD)
    sh = net.add_shuffle(x)
    sh.set_input(1, doubled)
    output(net, sh.get_output(0), "y")
    assert dims.is_shape_tensor and doubled.is_shape_tensor  # through a polymorphic layer
    assert not dims.is_execution_tensor
    assert not x.is_shape_tensor and x.is_execution_tensor
    assert not sh.get_output(0).is_shape_tensor


def test_dims_permutation_volume_logger():
    d = trt.Dims([2, 3])
    assert isinstance(d, trt.Dims) and d == (2, 3) and d == [2, 3] and len(d) == 2
    assert repr(trt.Dims([4])) == "(4,)" and trt.Dims() == ()
    assert trt.Dims3(1, 2, 3) == (1, 2, 3) and trt.DimsHW(4, 5).w == 5
    with pytest.raises(ValueError):
        trt.Dims2([1, 2, 3])
    assert trt.volume(trt.Dims([2, 3, 4])) == 24 and trt.volume(()) == 1
    assert isinstance(trt.Permutation([1, 0]), trt.Permutation)
    net = new_network()
    x = net.add_input("x", trt.float32, (2, 3))
    assert isinstance(x.shape, trt.Dims) and x.shape == (2, 3)
    assert trt.Logger.Severity.WARNING == trt.Logger.WARNING == 2
    assert trt.Logger(trt.Logger.ERROR).min_severity == trt.ILogger.Severity.ERROR


def test_precision_and_output_type_are_honoured():
    """precision HALF computes in float16; set_output_type(0, HALF) rounds the output to
    float16 while the tensor stays FLOAT (TensorRT converts back)."""
    a = np.array([1 + 2**-12, 3.0001], np.float32)
    b = np.array([2**-11, 1e-4], np.float32)
    for how in ("precision", "output_type"):
        net = new_network()
        xa, xb = net.add_input("a", trt.float32, (2,)), net.add_input("b", trt.float32, (2,))
        layer = net.add_elementwise(xa, xb, E.SUM)
        assert layer.precision is trt.float32 and not layer.precision_is_set
        assert layer.get_output_type(0) is trt.float32 and not layer.output_type_is_set(0)
        if how == "precision":
            layer.precision = trt.float16
            assert layer.precision_is_set
            want = (a.astype(np.float16) + b.astype(np.float16)).astype(np.float32)
        else:
            layer.set_output_type(0, trt.float16)
            assert layer.output_type_is_set(0) and layer.get_output_type(0) is trt.float16
            want = (a + b).astype(np.float16).astype(np.float32)
        assert layer.get_output(0).dtype is trt.float32
        output(net, layer.get_output(0), "y")
        m = ig.load(net)  # (ONNX Runtime's optimizer folds float32->16->32 round trips)
        for got in (m.run({"a": a, "b": b})["y"], m.run({"a": a, "b": b}, backend="jax")["y"]):
            assert got.dtype == np.float32
            np.testing.assert_array_equal(got, want)
        assert not np.array_equal(want, a + b)
        layer.reset_precision()
        layer.reset_output_type(0)
        np.testing.assert_array_equal(ig.load(net).run({"a": a, "b": b})["y"], a + b)


def test_output_tensor_dtype_converts_the_output_binding():
    net = new_network()
    x = net.add_input("x", trt.float32, (3,))
    y = net.add_identity(x).get_output(0)
    output(net, y, "y")
    y.dtype = trt.float16
    assert y.dtype is trt.float16
    got = ig.load(net).run({"x": np.array([1, 2, 3], np.float32)})["y"]
    assert got.dtype == np.float16


def test_strongly_typed_network_ignores_output_types():
    net = trt.Builder(trt.Logger(trt.Logger.INTERNAL_ERROR)).create_network(
        1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED))
    x = net.add_input("x", trt.float32, (2,))
    layer = net.add_identity(x)
    layer.set_output_type(0, trt.float16)
    assert not layer.output_type_is_set(0) and net.get_flag(
        trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED)


def test_gather_negative_indices():
    """TensorRT wraps a negative index on an axis of build-time length (its cookbook's
    Gather example logs x[..., -1, :] as the last row) and leaves it undefined on an axis of
    run-time length: refused there, at build time or by an out-of-range read."""
    net = new_network()
    x = net.add_input("x", trt.float32, (4, 2))
    output(net, net.add_gather(x, const(net, np.array([-1, 0], np.int32)), 0).get_output(0), "y")
    xv = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_array_equal(ig.load(net).run({"x": xv})["y"], xv[[3, 0]])
    net = new_network()
    x = net.add_input("x", trt.float32, (-1,))
    with pytest.raises(ig.ModelError, match="negative"):
        _ = net.add_gather(x, const(net, np.array([-1], np.int32)), 0).get_output(0).shape
    net = new_network()
    x = net.add_input("x", trt.float32, (-1,))
    i = net.add_input("i", trt.int32, (1,))
    output(net, net.add_gather(x, i, 0).get_output(0), "y")
    with pytest.raises(ig.ExecutionError, match="out of"):
        ig.load(net).run({"x": np.ones(3, np.float32), "i": np.array([-1], np.int32)})


def test_reduce_none_is_refused():
    net = new_network()
    x = net.add_input("x", trt.float32, (3,))
    with pytest.raises(ig.ModelError, match="add_reduce.*NONE"):
        net.add_reduce(x, trt.ReduceOperation.NONE, 1, False)


def _profile_network():
    builder = trt.Builder(trt.Logger())
    net = builder.create_network()
    x = net.add_input("x", trt.float32, (-1, 2))
    n = net.add_input("n", trt.int32, ())
    loop = net.add_loop()
    loop.add_trip_limit(n, trt.TripLimit.COUNT)
    rec = loop.add_recurrence(x)
    rec.set_input(1, ew(net, rec.get_output(0), rec.get_output(0), E.SUM))
    output(net, loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE)
           .get_output(0), "y")
    return builder, net


def test_builder_config_profile_and_the_engine_error():
    builder, net = _profile_network()
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 30)
    config.set_flag(trt.BuilderFlag.FP16)
    assert config.get_flag(trt.BuilderFlag.FP16) and not config.get_flag(trt.BuilderFlag.INT8)
    assert config.get_memory_pool_limit(trt.MemoryPoolType.WORKSPACE) == 1 << 30
    assert not builder.is_network_supported(net, config)  # dynamic inputs, no profile
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 2), (4, 2), (8, 2))
    profile.set_shape_input("n", [0], [3], [5])
    assert profile.get_shape("x") == [(1, 2), (4, 2), (8, 2)]
    with pytest.raises(ig.ModelError, match="min <= opt <= max"):
        profile.set_shape("x", (4, 2), (1, 2), (8, 2))
    assert config.add_optimization_profile(profile) == 0
    assert net.get_input(1).is_shape_tensor  # the trip count
    with pytest.raises(ig.UnsupportedError, match=r"ig\.load\(network\)\.run"):
        builder.build_serialized_network(net, config)
    with pytest.raises(ig.UnsupportedError, match=r"ig\.load\(network\)\.run"):
        trt.Runtime(trt.Logger()).deserialize_cuda_engine(b"")
    # the profile now bounds what a run accepts
    m = ig.load(net)
    y = m.run({"x": np.ones((3, 2), np.float32), "n": np.array(2, np.int32)})["y"]
    np.testing.assert_array_equal(y, np.full((3, 2), 4, np.float32))
    with pytest.raises(ig.ExecutionError, match="'x' is outside its optimization profiles"):
        m.run({"x": np.ones((9, 2), np.float32), "n": np.array(2, np.int32)})
    with pytest.raises(ig.ExecutionError, match="'n' is outside"):
        m.run({"x": np.ones((3, 2), np.float32), "n": np.array(6, np.int32)})


def test_profile_checked_against_the_network():
    builder, net = _profile_network()
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 3), (1, 3), (1, 3))  # the input's second dimension is 2
    profile.set_shape_input("n", [1], [1], [1])
    config.add_optimization_profile(profile)
    with pytest.raises(ig.ModelError, match="does not fit input 'x'"):
        builder.build_serialized_network(net, config)
