"""Network definitions of real TensorRT code, rebuilt call for call with ``import
itergraph.network as trt`` and run with ``ig.load(network).run`` instead of an engine, against
NumPy references written here. Each test names the code it follows:

- NVIDIA/trt-samples-for-hackathon-cn, cookbook/02-API/Layer/LoopStructure/main.py (TensorRT
  10.16): case_for, case_reverse, case_for_set_input, case_while, case_iterator,
  case_unidirectional_lstm; .../IfConditionStructure/main.py: case_simple;
- NVIDIA/TensorRT, samples/python/network_api_pytorch_mnist/sample.py: populate_network;
- pytorch/TensorRT, py/torch_tensorrt/dynamo/conversion/impl/embedding.py:
  embedding_bag_with_ITensor_offsets, and .../impl/slice/ops.py: cumsum (the loop form).
"""

from __future__ import annotations

import numpy as np
import pytest

import itergraph as ig
import itergraph.network as trt

E = trt.ElementWiseOperation


def _network():
    builder = trt.Builder(trt.Logger())
    return builder, builder.create_network(), builder.create_optimization_profile()


def _run(network, feeds, backend="numpy"):
    return ig.load(network).run(feeds, backend=backend)


# -- the cookbook's LoopStructure ---------------------------------------------------------------

def test_cookbook_loop_for():
    """A recurrence added to itself t=5 times; LAST_VALUE and a CONCATENATE of the body of
    length 6 (one entry past the trips: padding, undefined in TensorRT, zeros here)."""
    _, net, _ = _network()
    x = np.ones([1, 2, 3, 4], np.float32)
    tensor = net.add_input("tensor", trt.float32, x.shape)
    loop = net.add_loop()
    loop.name = "A cute Loop structure"
    layer_t = net.add_constant((), np.array([5], np.int32))
    layer_t.shape = ()
    loop.add_trip_limit(layer_t.get_output(0), trt.TripLimit.COUNT)
    rec = loop.add_recurrence(tensor)
    body = net.add_elementwise(rec.get_output(0), rec.get_output(0), E.SUM)
    body.op = E.SUM
    rec.set_input(1, body.get_output(0))
    last = loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE, 0)
    every = loop.add_loop_output(body.get_output(0), trt.LoopOutput.CONCATENATE, 0)
    every.set_input(1, net.add_constant((), np.array([6], np.int32)).get_output(0))
    net.mark_output(last.get_output(0))
    net.mark_output(every.get_output(0))
    assert tuple(every.get_output(0).shape) == (6, 1, 2, 3, 4)
    out = list(_run(net, {"tensor": x}).values())
    np.testing.assert_array_equal(out[0], x * 32)
    want = np.stack([x * 2 ** (i + 1) for i in range(5)] + [np.zeros_like(x)])
    np.testing.assert_array_equal(out[1], want)


def _iterator_loop(kind):
    _, net, _ = _network()
    x = np.ones([1, 2, 3, 4], np.float32)
    tensor = net.add_input("tensor", trt.float32, x.shape)
    loop = net.add_loop()
    it = loop.add_iterator(tensor, 1, False)
    it.axis = 1
    n_c = net.add_constant((), np.array([2], np.int32))
    loop.add_trip_limit(n_c.get_output(0), trt.TripLimit.COUNT)
    init = net.add_constant([1, 3, 4], np.ones(12, np.float32))
    rec = loop.add_recurrence(init.get_output(0))
    body = net.add_elementwise(rec.get_output(0), it.get_output(0), E.SUM)
    rec.set_input(1, body.get_output(0))
    last = loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE, 0)
    every = loop.add_loop_output(body.get_output(0), kind, 0)
    every.set_input(1, n_c.get_output(0))
    net.mark_output(last.get_output(0))
    net.mark_output(every.get_output(0))
    out = list(_run(net, {"tensor": x}).values())
    steps = [np.full((1, 3, 4), 2, np.float32), np.full((1, 3, 4), 3, np.float32)]
    np.testing.assert_array_equal(out[0], steps[-1])
    return out[1], np.stack(steps)


def test_cookbook_loop_iterator_and_reverse():
    got, steps = _iterator_loop(trt.LoopOutput.CONCATENATE)
    np.testing.assert_array_equal(got, steps)
    got, steps = _iterator_loop(trt.LoopOutput.REVERSE)
    np.testing.assert_array_equal(got, steps[::-1])


def test_cookbook_loop_trip_count_from_a_shape_input():
    builder, net, profile = _network()
    x = np.ones([1, 2, 3, 4], np.float32)
    tensor = net.add_input("tensor", trt.float32, x.shape)
    count = net.add_input("tensor1", trt.int32, ())
    profile.set_shape_input(count.name, [1], [6], [10])
    loop = net.add_loop()
    loop.add_trip_limit(count, trt.TripLimit.COUNT)
    rec = loop.add_recurrence(tensor)
    body = net.add_elementwise(rec.get_output(0), rec.get_output(0), E.SUM)
    rec.set_input(1, body.get_output(0))
    last = loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE, 0)
    every = loop.add_loop_output(body.get_output(0), trt.LoopOutput.CONCATENATE, 0)
    every.set_input(1, count)
    net.mark_output(last.get_output(0))
    net.mark_output(every.get_output(0))
    assert count.is_shape_tensor
    config = builder.create_builder_config()
    config.add_optimization_profile(profile)
    with pytest.raises(ig.UnsupportedError, match="ig.load"):
        builder.build_serialized_network(net, config)
    out = list(_run(net, {"tensor": x, "tensor1": np.array(5, np.int32)}).values())
    np.testing.assert_array_equal(out[0], x * 32)
    assert out[1].shape == (5, 1, 2, 3, 4)
    with pytest.raises(ig.ExecutionError, match="outside its optimization profiles"):
        _run(net, {"tensor": x, "tensor1": np.array(11, np.int32)})


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_cookbook_loop_while(backend):
    """while x.flat[0] < 32: x += x, the condition from a reshape, a slice, a reshape to 0-D,
    a subtraction from the threshold, a ReLU and a cast to BOOL."""
    _, net, _ = _network()
    x = np.ones([1, 2, 3, 4], np.float32)
    tensor = net.add_input("tensor", trt.float32, x.shape)
    loop = net.add_loop()
    rec = loop.add_recurrence(tensor)
    threshold = net.add_constant((), np.array([32], np.float32))
    flat = net.add_shuffle(rec.get_output(0))
    flat.reshape_dims = [-1]
    first = net.add_slice(flat.get_output(0), [0], [1], [1])
    scalar = net.add_shuffle(first.get_output(0))
    scalar.reshape_dims = []
    gap = net.add_elementwise(threshold.get_output(0), scalar.get_output(0), E.SUB)
    relu = net.add_activation(gap.get_output(0), trt.ActivationType.RELU)
    cond = net.add_cast(relu.get_output(0), trt.bool)
    loop.add_trip_limit(cond.get_output(0), trt.TripLimit.WHILE)
    body = net.add_elementwise(rec.get_output(0), rec.get_output(0), E.SUM)
    rec.set_input(1, body.get_output(0))
    last = loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE, 0)
    every = loop.add_loop_output(rec.get_output(0), trt.LoopOutput.CONCATENATE, 0)
    every.set_input(1, net.add_constant((), np.array([6], np.int32)).get_output(0))
    net.mark_output(last.get_output(0))
    net.mark_output(every.get_output(0))
    out = list(_run(net, {"tensor": x}, backend).values())
    np.testing.assert_array_equal(out[0], x * 32)
    want = np.stack([x * 2**i for i in range(5)] + [np.zeros_like(x)])
    np.testing.assert_array_equal(out[1], want)


def _cookbook_lstm(n_ih=7, n_h=5):
    """The cookbook's loop LSTM: every gate uses the same all-ones weights, x [b, t, ih]
    with dynamic batch and time, the trip count from the time axis of x's shape."""
    builder, net, profile = _network()
    input_x = net.add_input("x", trt.float32, [-1, -1, n_ih])
    input_h0 = net.add_input("h0", trt.float32, [-1, n_h])
    input_c0 = net.add_input("c0", trt.float32, [-1, n_h])
    profile.set_shape(input_x.name, [1, 1, n_ih], [3, 4, n_ih], [3, 8, n_ih])
    w_x = net.add_constant([n_ih, n_h], trt.Weights(np.ones((n_ih, n_h), np.float32)))
    w_h = net.add_constant([n_h, n_h], trt.Weights(np.ones((n_h, n_h), np.float32)))
    bias = net.add_constant([1, n_h], trt.Weights(np.zeros(n_h, np.float32)))

    def gate(x_t, h, sigmoid):
        a = net.add_matrix_multiply(x_t, trt.MatrixOperation.NONE, w_x.get_output(0),
                                    trt.MatrixOperation.NONE)
        b = net.add_matrix_multiply(h, trt.MatrixOperation.NONE, w_h.get_output(0),
                                    trt.MatrixOperation.NONE)
        s = net.add_elementwise(a.get_output(0), b.get_output(0), E.SUM)
        s = net.add_elementwise(s.get_output(0), bias.get_output(0), E.SUM)
        kind = trt.ActivationType.SIGMOID if sigmoid else trt.ActivationType.TANH
        return net.add_activation(s.get_output(0), kind).get_output(0)

    loop = net.add_loop()
    t0 = net.add_shape(input_x)
    t1 = net.add_slice(t0.get_output(0), [1], [1], [1])
    t2 = net.add_shuffle(t1.get_output(0))
    t2.reshape_dims = ()
    t3 = net.add_cast(t2.get_output(0), trt.DataType.INT32)
    loop.add_trip_limit(t3.get_output(0), trt.TripLimit.COUNT)
    x_t = loop.add_iterator(input_x, 1, False).get_output(0)
    hr, cr = loop.add_recurrence(input_h0), loop.add_recurrence(input_c0)
    h, c = hr.get_output(0), cr.get_output(0)
    gi, gf, gc, go = gate(x_t, h, True), gate(x_t, h, True), gate(x_t, h, False), gate(
        x_t, h, True)
    c1 = net.add_elementwise(net.add_elementwise(gf, c, E.PROD).get_output(0),
                             net.add_elementwise(gi, gc, E.PROD).get_output(0), E.SUM)
    h1 = net.add_elementwise(go, net.add_activation(c1.get_output(0),
                                                    trt.ActivationType.TANH).get_output(0),
                             E.PROD)
    hr.set_input(1, h1.get_output(0))
    cr.set_input(1, c1.get_output(0))
    y = loop.add_loop_output(h, trt.LoopOutput.LAST_VALUE, 0)
    y.get_output(0).name = "y"
    seq = loop.add_loop_output(h1.get_output(0), trt.LoopOutput.CONCATENATE, 1)
    seq.get_output(0).name = "h1"
    seq.set_input(1, t2.get_output(0))
    c_last = loop.add_loop_output(c, trt.LoopOutput.LAST_VALUE, 0)
    c_last.get_output(0).name = "c1"
    for t in (y, seq, c_last):
        net.mark_output(t.get_output(0))
    return net


def _lstm_reference(x, h, c):
    def sig(v):
        return 1 / (1 + np.exp(-v))

    hs = []
    for t in range(x.shape[1]):
        g = x[:, t].sum(1, keepdims=True) + h.sum(1, keepdims=True)  # all-ones weights
        i = f = o = sig(g)
        c = f * c + i * np.tanh(g)
        h = o * np.tanh(c)
        hs.append(h)
    seq = np.stack(hs, 1) if hs else np.zeros((x.shape[0], 0, h.shape[1]), np.float32)
    return h, seq, c


@pytest.mark.parametrize("steps", [4, 0])
def test_cookbook_unidirectional_lstm(steps):
    """With 4 steps as the cookbook runs it, and with none (the zero-trip CONCATENATE keeps
    the run-time batch dimension, as TensorRT's shape propagation gives it)."""
    rng = np.random.default_rng(steps)
    feeds = {"x": rng.standard_normal((3, steps, 7)).astype(np.float32) * 0.3,
             "h0": np.ones((3, 5), np.float32), "c0": np.zeros((3, 5), np.float32)}
    out = _run(_cookbook_lstm(), feeds)
    h, seq, c = _lstm_reference(feeds["x"], feeds["h0"], feeds["c0"])
    assert out["h1"].shape == (3, steps, 5)
    np.testing.assert_allclose(out["y"], h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["h1"], seq, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["c1"], c, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("first", [1.0, 0.0])
def test_cookbook_if_condition_structure(first):
    """if x.flat[0] != 0: x * 2 else x, through one conditional input shared by both
    branches; the output layer is named ``[Output]`` as TensorRT names it."""
    _, net, _ = _network()
    x = np.arange(60, dtype=np.float32).reshape(1, 3, 4, 5) + first
    tensor = net.add_input("tensor", trt.float32, x.shape)
    flat = net.add_shuffle(tensor)
    flat.reshape_dims = [-1]
    head = net.add_slice(flat.get_output(0), [0], [1], [1])
    head.start, head.shape, head.stride = [0], [1], [1]
    scalar = net.add_shuffle(head.get_output(0))
    scalar.reshape_dims = []
    cond = net.add_cast(scalar.get_output(0), trt.bool)
    if_structure = net.add_if_conditional()
    if_structure.name = "A cute If Condition Structure"
    inp = if_structure.add_input(tensor)
    if_structure.set_condition(cond.get_output(0))
    doubled = net.add_elementwise(inp.get_output(0), inp.get_output(0), E.SUM)
    same = net.add_identity(inp.get_output(0))
    out = if_structure.add_output(doubled.get_output(0), same.get_output(0))
    assert out.name == "(Unnamed Layer* 8) [Output]"
    net.mark_output(out.get_output(0))
    got = list(_run(net, {"tensor": x}).values())[0]
    np.testing.assert_array_equal(got, x * 2 if first else x)


# -- NVIDIA's network_api_pytorch_mnist sample ------------------------------------------------

def _mnist_reference(x, w):
    def conv(a, k, b):
        n, ci, hh, ww = a.shape
        co, _, kh, kw = k.shape
        out = np.zeros((n, co, hh - kh + 1, ww - kw + 1), np.float32)
        for i in range(kh):
            for j in range(kw):
                patch = a[:, :, i:i + out.shape[2], j:j + out.shape[3]]
                out += np.einsum("nchw,oc->nohw", patch, k[:, :, i, j])
        return out + b[None, :, None, None]

    def pool(a):
        n, c, hh, ww = a.shape
        return a.reshape(n, c, hh // 2, 2, ww // 2, 2).max((3, 5))

    a = pool(conv(x, w["conv1.weight"], w["conv1.bias"]))
    a = pool(conv(a, w["conv2.weight"], w["conv2.bias"]))
    a = np.maximum(a.reshape(1, -1) @ w["fc1.weight"].T + w["fc1.bias"], 0)
    return (a @ w["fc2.weight"].T + w["fc2.bias"]).reshape(1, 10, 1, 1)


def test_sample_network_api_pytorch_mnist():
    rng = np.random.default_rng(0)
    shapes = {"conv1.weight": (20, 1, 5, 5), "conv1.bias": (20,),
              "conv2.weight": (50, 20, 5, 5), "conv2.bias": (50,), "fc1.weight": (500, 800),
              "fc1.bias": (500,), "fc2.weight": (10, 500), "fc2.bias": (10,)}
    w = {k: (rng.standard_normal(s) * 0.1).astype(np.float32) for k, s in shapes.items()}
    net = trt.Builder(trt.Logger()).create_network(0)
    input_tensor = net.add_input(name="data", dtype=trt.float32, shape=(1, 1, 28, 28))

    def add_matmul_as_fc(net, input, outputs, w, b):  # noqa: A002 - the sample's names
        m = 1 if len(input.shape) == 3 else input.shape[0]
        k = int(np.prod(input.shape) / m)
        n = int(w.size / k)
        input_reshape = net.add_shuffle(input)
        input_reshape.reshape_dims = trt.Dims2(m, k)
        filter_const = net.add_constant(trt.Dims2(n, k), w)
        mm = net.add_matrix_multiply(input_reshape.get_output(0), trt.MatrixOperation.NONE,
                                     filter_const.get_output(0), trt.MatrixOperation.TRANSPOSE)
        bias_const = net.add_constant(trt.Dims2(1, n), b)
        bias_add = net.add_elementwise(mm.get_output(0), bias_const.get_output(0), E.SUM)
        output_reshape = net.add_shuffle(bias_add.get_output(0))
        output_reshape.reshape_dims = trt.Dims4(m, n, 1, 1)
        return output_reshape

    conv1 = net.add_convolution_nd(input=input_tensor, num_output_maps=20, kernel_shape=(5, 5),
                                   kernel=w["conv1.weight"], bias=w["conv1.bias"])
    conv1.stride_nd = (1, 1)
    pool1 = net.add_pooling_nd(input=conv1.get_output(0), type=trt.PoolingType.MAX,
                               window_size=(2, 2))
    pool1.stride_nd = trt.Dims2(2, 2)
    conv2 = net.add_convolution_nd(pool1.get_output(0), 50, (5, 5), w["conv2.weight"],
                                   w["conv2.bias"])
    conv2.stride_nd = (1, 1)
    pool2 = net.add_pooling_nd(conv2.get_output(0), trt.PoolingType.MAX, (2, 2))
    pool2.stride_nd = trt.Dims2(2, 2)
    fc1 = add_matmul_as_fc(net, pool2.get_output(0), 500, w["fc1.weight"], w["fc1.bias"])
    relu1 = net.add_activation(input=fc1.get_output(0), type=trt.ActivationType.RELU)
    fc2 = add_matmul_as_fc(net, relu1.get_output(0), 10, w["fc2.weight"], w["fc2.bias"])
    fc2.get_output(0).name = "prob"
    net.mark_output(tensor=fc2.get_output(0))
    x = rng.standard_normal((1, 1, 28, 28)).astype(np.float32)
    np.testing.assert_allclose(_run(net, {"data": x})["prob"], _mnist_reference(x, w),
                               rtol=1e-4, atol=1e-4)


# -- Torch-TensorRT converters ------------------------------------------------------------------

def _scalar(net, value, dtype=np.int32):
    a = np.asarray(value, dtype)
    return net.add_constant(a.shape, a).get_output(0)


def _embedding_bag_network(mode, include_last_offset, rows, n_offsets):
    """embedding_bag_with_ITensor_offsets: an outer loop over the bags (offsets), an inner
    loop marking the rows of the bag, a select, a reduction, and a conditional for empty bags.
    Its next end is ``offsets[i + 1]``, which on the last trip is out of range: TensorRT's lazy
    recurrences never evaluate it."""
    net = trt.Builder(trt.Logger()).create_network()
    embed = net.add_input("embed", trt.float32, (rows, 4))
    offsets = net.add_input("offsets", trt.int32, (n_offsets,))
    c0, c1 = _scalar(net, 0), _scalar(net, 1)
    embed_shape = net.add_shape(embed).get_output(0)
    len_embed = net.add_cast(net.add_gather(embed_shape, c0, 0).get_output(0),
                             trt.int32).get_output(0)
    if include_last_offset:  # offsets[-1] = len(embed)
        head = net.add_slice(offsets, [0], [n_offsets - 1], [1]).get_output(0)
        last = net.add_shuffle(len_embed)
        last.reshape_dims = (1,)
        offsets = net.add_concatenation([head, last.get_output(0)]).get_output(0)
    else:  # offsets.append(len(embed))
        last = net.add_shuffle(len_embed)
        last.reshape_dims = (1,)
        offsets = net.add_concatenation([offsets, last.get_output(0)]).get_output(0)
    placeholder = net.add_elementwise(embed, _scalar(net, [[0.0]], np.float32), E.PROD)
    placeholder = placeholder.get_output(0)
    zero_row = net.add_gather(placeholder, c0, 0).get_output(0)
    if mode == 2:
        placeholder = net.add_elementwise(placeholder, _scalar(net, [[-np.inf]], np.float32),
                                          E.SUM).get_output(0)
    loop1 = net.add_loop()
    n_bags = net.add_gather(net.add_shape(offsets).get_output(0), c0, 0).get_output(0)
    trip1 = net.add_elementwise(n_bags, _scalar(net, 1, np.int64), E.SUB).get_output(0)
    trip1 = net.add_cast(trip1, trt.int32).get_output(0)
    loop1.add_trip_limit(trip1, trt.TripLimit.COUNT)
    rec_i = loop1.add_recurrence(c1)
    rec_start = loop1.add_recurrence(net.add_gather(offsets, c0, 0).get_output(0))
    rec_end = loop1.add_recurrence(net.add_gather(offsets, c1, 0).get_output(0))
    i_t, start, end = rec_i.get_output(0), rec_start.get_output(0), rec_end.get_output(0)
    loop2 = net.add_loop()
    loop2.add_trip_limit(len_embed, trt.TripLimit.COUNT)
    rec_j = loop2.add_recurrence(c0)
    j = rec_j.get_output(0)
    ge = net.add_unary(net.add_elementwise(j, start, E.LESS).get_output(0),
                       trt.UnaryOperation.NOT).get_output(0)
    lt = net.add_elementwise(j, end, E.LESS).get_output(0)
    inside = net.add_elementwise(ge, lt, E.AND).get_output(0)
    rec_j.set_input(1, net.add_elementwise(j, c1, E.SUM).get_output(0))
    mask = loop2.add_loop_output(inside, trt.LoopOutput.CONCATENATE)
    mask.set_input(1, len_embed)
    mask_col = net.add_shuffle(mask.get_output(0))
    mask_col.reshape_dims = (rows, 1)
    one_bag = net.add_select(mask_col.get_output(0), embed, placeholder).get_output(0)
    if mode == 2:
        reduced = net.add_reduce(one_bag, trt.ReduceOperation.MAX, 1, False).get_output(0)
    else:
        reduced = net.add_reduce(one_bag, trt.ReduceOperation.SUM, 1, False).get_output(0)
    if mode == 1:
        count = net.add_cast(net.add_elementwise(end, start, E.SUB).get_output(0),
                             trt.float32).get_output(0)
        count = net.add_shuffle(count)
        count.reshape_dims = (1,)
        reduced = net.add_elementwise(reduced, count.get_output(0), E.DIV).get_output(0)
    cond = net.add_if_conditional()
    cond.set_condition(net.add_elementwise(start, end, E.EQUAL).get_output(0))
    true_sg, false_sg = cond.add_input(zero_row), cond.add_input(reduced)
    bag = cond.add_output(true_sg.get_output(0), false_sg.get_output(0)).get_output(0)
    next_i = net.add_elementwise(i_t, c1, E.SUM).get_output(0)
    rec_i.set_input(1, next_i)
    rec_start.set_input(1, end)
    rec_end.set_input(1, net.add_gather(offsets, next_i, 0).get_output(0))
    bags = loop1.add_loop_output(bag, trt.LoopOutput.CONCATENATE)
    bags.set_input(1, trip1)
    bags.get_output(0).name = "bags"
    net.mark_output(bags.get_output(0))
    return net


def _embedding_bag_reference(embed, offsets, mode, include_last_offset):
    ends = list(offsets[1:]) + ([] if include_last_offset else [len(embed)])
    if include_last_offset:
        ends[-1] = len(embed)
    out = []
    for s, e in zip(offsets, ends):
        rows = embed[s:e]
        if len(rows) == 0:
            out.append(np.zeros(embed.shape[1], np.float32))
        else:
            out.append([rows.sum(0), rows.mean(0), rows.max(0)][mode])
    return np.stack(out).astype(np.float32)


@pytest.mark.parametrize("mode,include_last_offset,backend", [
    (0, False, "numpy"), (1, True, "numpy"), (2, False, "numpy"), (0, True, "jax"),
    (1, False, "onnxruntime")])
def test_torch_tensorrt_embedding_bag_with_itensor_offsets(mode, include_last_offset, backend):
    rng = np.random.default_rng(mode)
    embed = rng.standard_normal((6, 4)).astype(np.float32)
    offsets = np.array([0, 2, 2, 5], np.int32)
    net = _embedding_bag_network(mode, include_last_offset, 6, len(offsets))
    feeds = {"embed": embed, "offsets": offsets}
    if backend == "onnxruntime":
        from net_helpers import run_ort

        got = run_ort(net, feeds)["bags"]
    else:
        got = _run(net, feeds, backend)["bags"]
    want = _embedding_bag_reference(embed, offsets, mode, include_last_offset)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_torch_tensorrt_loop_cumsum_with_a_dynamic_axis():
    """cumsum as Torch-TensorRT builds it for a dynamic axis: the trip count is the reduced
    (0-D) INT64 length of the axis, the running sum starts from zeros of the run-time shape
    (a fill), and the sums are concatenated back on that axis."""
    net = trt.Builder(trt.Logger()).create_network()
    x = net.add_input("x", trt.float32, (2, -1, 3))
    shape = net.add_shape(x).get_output(0)
    length = net.add_slice(shape, [1], [1], [1]).get_output(0)
    trip = net.add_reduce(length, trt.ReduceOperation.SUM, 1, False).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(trip, trt.TripLimit.COUNT)
    data = loop.add_iterator(x, 1, reverse=False).get_output(0)
    data_shape = net.add_concatenation([_scalar(net, [2], np.int64),
                                        _scalar(net, [3], np.int64)]).get_output(0)
    fill = net.add_fill((2,), trt.FillOperation.LINSPACE, trt.float32)
    fill.set_input(0, data_shape)
    fill.set_input(1, _scalar(net, 0.0, np.float32))
    fill.set_input(2, _scalar(net, [0.0, 0.0], np.float32))
    running = loop.add_recurrence(fill.get_output(0))
    current = net.add_elementwise(data, running.get_output(0), E.SUM).get_output(0)
    running.set_input(1, current)
    out = loop.add_loop_output(current, trt.LoopOutput.CONCATENATE, 1)
    out.set_input(1, trip)
    out.get_output(0).name = "y"
    net.mark_output(out.get_output(0))
    xv = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
    np.testing.assert_array_equal(_run(net, {"x": xv})["y"], np.cumsum(xv, 1))
