"""The NumPy planner's fused pairs (`backends.numpy.fusions`): Conv followed by an inference
BatchNormalization runs as one Conv with folded constants, against ONNX Runtime (which
fuses the same pair); the pair stays two kernels wherever folding would be wrong."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import itergraph as ig

F32 = np.float32


def _conv_bn(*, group=1, c=4, m=4, bias=True, conv_output=False, params_as="init",
             training=False, weights_as="init", dims=2):
    rng = np.random.default_rng(group * 7 + c + m + dims)
    k = [3] * dims
    w = (rng.standard_normal((m, c // group, *k)) * 0.4).astype(F32)
    b = rng.standard_normal(m).astype(F32)
    scale, shift, mean = (rng.standard_normal(m).astype(F32) for _ in range(3))
    var = rng.random(m).astype(F32) + 0.5
    consts = {"W": w, "sc": scale, "sh": shift, "mu": mean, "var": var}
    if bias:
        consts["B"] = b
    nodes, inits, inputs, feeds = [], [], [], {}
    for name, arr in consts.items():
        as_input = (params_as == "input" and name in ("sc", "sh", "mu", "var")) or (
            weights_as == "input" and name == "W")
        if as_input:
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, arr.shape))
            feeds[name] = arr
        elif weights_as == "constant" and name == "W":
            nodes.append(helper.make_node("Constant", [], [name],
                                          value=numpy_helper.from_array(arr)))
        else:
            inits.append(numpy_helper.from_array(arr, name))
    size = [9, 7, 5][:dims]
    inputs.insert(0, helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, *size]))
    feeds["x"] = rng.standard_normal((1, c, *size)).astype(F32)
    nodes.append(helper.make_node("Conv", ["x", "W"] + (["B"] if bias else []), ["h"],
                                  group=group, pads=[1] * (2 * dims)))
    bn_out = ["y", "run_mean", "run_var"] if training else ["y"]
    nodes.append(helper.make_node("BatchNormalization", ["h", "sc", "sh", "mu", "var"], bn_out,
                                  epsilon=1e-3, training_mode=int(training)))
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if conv_output:
        outs.append(helper.make_tensor_value_info("h", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "conv_bn", inputs, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    return model, feeds


def _kernel_calls(model) -> int:
    return ig.load(model).numpy_plan(None, False).source.count(" = k")


def _check(model, feeds, calls):
    m = ig.load(model)
    got = m.run(feeds, backend="numpy")
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    for g, w in zip(got.values(), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert _kernel_calls(model) == calls


@pytest.mark.parametrize("case", [
    dict(), dict(bias=False), dict(group=4), dict(group=2, c=4, m=6), dict(dims=1),
    dict(dims=3), dict(weights_as="constant"),
])
def test_conv_batch_norm_runs_as_one_conv(case):
    model, feeds = _conv_bn(**case)
    _check(model, feeds, calls=1)


@pytest.mark.parametrize("case", [
    dict(conv_output=True),      # the Conv's own output is wanted
    dict(params_as="input"),     # statistics fed at run time
    dict(weights_as="input"),    # weights fed at run time
])
def test_conv_batch_norm_stays_two_kernels(case):
    model, feeds = _conv_bn(**case)
    _check(model, feeds, calls=2)


def test_training_batch_norm_is_not_folded():
    """In training mode the statistics come from the batch: the pair stays two kernels and Y
    is normalised by the Conv output's own mean and variance."""
    model, feeds = _conv_bn(training=True, conv_output=True)
    got = ig.load(model).run(feeds, backend="numpy")
    h = got["h"].astype(np.float64)
    mean, var = h.mean(axis=(0, 2, 3), keepdims=True), h.var(axis=(0, 2, 3), keepdims=True)
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    want = ((h - mean) / np.sqrt(var + 1e-3) * init["sc"].reshape(1, -1, 1, 1)
            + init["sh"].reshape(1, -1, 1, 1))
    np.testing.assert_allclose(got["y"], want, rtol=1e-4, atol=1e-4)
    assert _kernel_calls(model) == 2


def test_profile_shows_the_fused_kernel():
    """`profile` times what runs: the pair as one row, named after the Conv."""
    from itergraph.inspect.profile import profile

    model, feeds = _conv_bn()
    model.graph.node[-2].name, model.graph.node[-1].name = "conv", "bn"
    report = profile(model, feeds, backend="numpy", repeat=2)
    rows = {s.name: s.op for s in report.nodes}
    assert rows == {"conv": "Conv+BatchNormalization"}
    assert any("two nodes" in n for n in report.notes)
    assert "Conv+BatchNormalization" in report.text()


def _squeeze_excite(*, c=6, mid=3, mul_first=False, bias_as_add=False, wanted=None,
                    dtype=np.float32):
    """GlobalAveragePool -> Conv 1x1 -> Relu -> Conv 1x1 (-> Add) -> Identity -> HardSigmoid
    -> Mul with the pooled input, as MobileNetV3 and PP-OCR write it."""
    rng = np.random.default_rng(c + mid)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    init = {"W1": rng.standard_normal((mid, c, 1, 1)), "B1": rng.standard_normal(mid),
            "W2": rng.standard_normal((c, mid, 1, 1)), "B2": rng.standard_normal(c)}
    conv2 = ["s2", "W2"] if bias_as_add else ["s2", "W2", "B2"]
    if bias_as_add:
        init["B2"] = init["B2"].reshape(1, c, 1, 1)
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["s0"]),
             helper.make_node("Conv", ["s0", "W1", "B1"], ["s1"], kernel_shape=[1, 1],
                              pads=[0, 0, 0, 0]),
             helper.make_node("Relu", ["s1"], ["s2"]),
             helper.make_node("Conv", conv2, ["s3"], kernel_shape=[1, 1])]
    last = "s3"
    if bias_as_add:
        nodes.append(helper.make_node("Add", ["s3", "B2"], ["s3b"]))
        last = "s3b"
    nodes += [helper.make_node("Identity", [last], ["s4"]),
              helper.make_node("HardSigmoid", ["s4"], ["s5"], alpha=0.2, beta=0.5),
              helper.make_node("Mul", ["s5", "x"] if mul_first else ["x", "s5"], ["y"])]
    outs = [helper.make_tensor_value_info(n, elem, None) for n in ["y"] + (wanted or [])]
    graph = helper.make_graph(
        nodes, "se", [helper.make_tensor_value_info("x", elem, ["n", "c", "h", "w"])], outs,
        [numpy_helper.from_array(v.astype(dtype), k) for k, v in init.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, {"x": rng.standard_normal((2, c, 5, 7)).astype(dtype)}


@pytest.mark.parametrize("case", [dict(), dict(mul_first=True), dict(bias_as_add=True)])
def test_squeeze_excite_block_runs_as_one_kernel(case):
    model, feeds = _squeeze_excite(**case)
    _check(model, feeds, calls=1)


def test_squeeze_excite_block_in_float64():
    """ONNX Runtime has no float64 GlobalAveragePool: the block written out in NumPy."""
    model, feeds = _squeeze_excite(dtype=np.float64)
    w = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    x = feeds["x"]
    s = x.mean(axis=(2, 3)) @ w["W1"][:, :, 0, 0].T + w["B1"]
    s = np.maximum(s, 0) @ w["W2"][:, :, 0, 0].T + w["B2"]
    alpha = float(np.float32(0.2))  # the attribute is a float32
    want = x * np.clip(alpha * s + 0.5, 0, 1)[:, :, None, None]
    got = ig.load(model).run(feeds, backend="numpy")["y"]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert _kernel_calls(model) == 1


def test_squeeze_excite_block_with_a_wanted_step_is_not_fused():
    model, feeds = _squeeze_excite(wanted=["s2"])
    _check(model, feeds, calls=5)  # pool, conv + relu (wanted), conv, hard sigmoid, mul


def test_squeeze_excite_block_reports_a_channel_mismatch_at_its_conv():
    """An input whose channels the weights do not fit runs the nodes' own kernels, which
    name the node that fails."""
    model, _ = _squeeze_excite(c=6)
    model.graph.node[1].name = "se_reduce"
    x = np.zeros((1, 5, 4, 4), F32)
    with pytest.raises(ig.Error, match="se_reduce"):
        ig.load(model).run({"x": x}, backend="numpy")


def _conv_activation(act, *, bn=True, shift=3.0, conv_wanted=False):
    """Conv (-> BatchNormalization) -> an activation: Relu, HardSigmoid, the hard-swish
    written out as PaddlePaddle exports it, ``x * clip(x + 3, 0, 6) / 6``, or the swish as
    YOLOv8 does, ``x * sigmoid(x)``."""
    rng = np.random.default_rng(5)
    init = {"W": rng.standard_normal((4, 3, 3, 3)).astype(F32) * 0.5,
            "B": rng.standard_normal(4).astype(F32),
            "sc": rng.standard_normal(4).astype(F32), "sh": rng.standard_normal(4).astype(F32),
            "mu": rng.standard_normal(4).astype(F32), "var": rng.random(4).astype(F32) + 0.5,
            "three": np.full([1] if np.ndim(shift) == 0 else [4, 1, 1], shift, F32),
            "zero": np.array(0, F32), "six": np.array(6, F32)}
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c" if bn else "t"], pads=[1, 1, 1, 1])]
    if bn:
        nodes.append(helper.make_node("BatchNormalization", ["c", "sc", "sh", "mu", "var"],
                                      ["t"]))
    if act == "hardswish":
        nodes += [helper.make_node("Add", ["t", "three"], ["a"]),
                  helper.make_node("Clip", ["a", "zero", "six"], ["k"]),
                  helper.make_node("Mul", ["t", "k"], ["m"]),
                  helper.make_node("Div", ["m", "six"], ["y"])]
    elif act == "swish":
        nodes += [helper.make_node("Sigmoid", ["t"], ["g"]),
                  helper.make_node("Mul", ["g", "t"], ["y"])]
    else:
        nodes.append(helper.make_node(act, ["t"], ["y"]))
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
            for n in ["y"] + (["c"] if conv_wanted else [])]
    graph = helper.make_graph(
        nodes, "conv_act", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)], outs,
        [numpy_helper.from_array(v, k) for k, v in init.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, {"x": rng.standard_normal((1, 3, 6, 5)).astype(F32) * 3}


@pytest.mark.parametrize("act,bn", [("Relu", True), ("Relu", False), ("HardSigmoid", True),
                                    ("HardSwish", True), ("hardswish", True),
                                    ("hardswish", False), ("swish", True),
                                    ("swish", False)])
def test_conv_activation_runs_in_the_conv_output(act, bn):
    model, feeds = _conv_activation(act, bn=bn)
    _check(model, feeds, calls=1)


@pytest.mark.parametrize("case,calls", [
    (dict(conv_wanted=True), 4),  # conv (wanted), batch norm, add + clip, mul + div
    (dict(shift=[3.0]), 3),       # a constant of one value per channel: not the pattern
])
def test_conv_hard_swish_not_fused(case, calls):
    model, feeds = _conv_activation("hardswish", **case)
    _check(model, feeds, calls=calls)


def _conv_scale_shift(scale_shape, shift_shape, *, sub=False):
    """Conv -> Mul by a constant -> Add (or Sub) of a constant -> Relu: a batch norm as
    PaddlePaddle exports it when the constants hold one value per channel."""
    rng = np.random.default_rng(11)
    init = {"W": rng.standard_normal((4, 3, 3, 3)).astype(F32),
            "B": rng.standard_normal(4).astype(F32),
            "a": rng.standard_normal(scale_shape).astype(F32),
            "c": rng.standard_normal(shift_shape).astype(F32)}
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["t"], pads=[1, 1, 1, 1]),
             helper.make_node("Mul", ["a", "t"], ["s"]),
             helper.make_node("Sub" if sub else "Add", ["s", "c"], ["u"]),
             helper.make_node("Relu", ["u"], ["y"])]
    graph = helper.make_graph(
        nodes, "conv_affine", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in init.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, {"x": rng.standard_normal((2, 3, 6, 5)).astype(F32)}


@pytest.mark.parametrize("scale,shift,sub,calls", [
    ((4, 1, 1), (1, 4, 1, 1), False, 1),
    ((1,), (4, 1, 1), True, 1),
    ((1, 1, 6, 5), (4, 1, 1), False, 3),  # a scale per position: conv, mul + add, relu
    ((4, 1, 1), (5,), False, 3),          # a shift along the last axis: conv + mul, add, relu
])
def test_conv_per_channel_scale_and_shift_fold_into_the_conv(scale, shift, sub, calls):
    model, feeds = _conv_scale_shift(scale, shift, sub=sub)
    _check(model, feeds, calls=calls)


def test_profile_names_every_node_of_a_fused_chain():
    from itergraph.inspect.profile import profile

    model, feeds = _conv_activation("hardswish")
    model.graph.node[0].name = "conv"
    report = profile(model, feeds, backend="numpy", repeat=2)
    assert {s.name: s.op for s in report.nodes} == {
        "conv": "Conv+BatchNormalization+Add+Clip+Mul+Div"}
