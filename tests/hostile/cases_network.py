"""Hostile uses of the TensorRT-style network API (``import itergraph.network as trt``): bad
arguments to the ``add_*`` methods, tensors from elsewhere, loops that break the build rules,
runaway loops and huge outputs."""

from __future__ import annotations

import numpy as np
from harness import Ok, Raises, case
from hostile_util import assert_close

import itergraph as ig
import itergraph.network as trt
from itergraph.errors import ExecutionError, IterationLimitError, ModelError

BOTH = ("numpy", "jax")
E = trt.ElementWiseOperation


def _net():
    return trt.Builder(trt.Logger()).create_network()


def _const(net, value, dtype=None):
    a = np.asarray(value, dtype=dtype)
    return net.add_constant(a.shape, a).get_output(0)


def _counting_loop(count=3, length=None, kind=trt.TripLimit.COUNT):
    """``x`` [2] float; a loop adding one to a recurrence `count` times; outputs the last value
    and the CONCATENATE of every value (padded to `length` when given)."""
    net = _net()
    x = net.add_input("x", trt.float32, (2,))
    loop = net.add_loop()
    loop.name = "counter"
    n = _const(net, np.int32(count))
    loop.add_trip_limit(n, kind)
    rec = loop.add_recurrence(x)
    nxt = net.add_elementwise(rec.get_output(0), _const(net, np.ones(2, np.float32)), E.SUM)
    rec.set_input(1, nxt.get_output(0))
    last = loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE)
    last.get_output(0).name = "last"
    net.mark_output(last.get_output(0))
    seq = loop.add_loop_output(rec.get_output(0), trt.LoopOutput.CONCATENATE, 0)
    seq.set_input(1, _const(net, np.int32(count if length is None else length)))
    seq.name = "all_values"
    seq.get_output(0).name = "seq"
    net.mark_output(seq.get_output(0))
    return net, loop


def _x(net):
    return net.add_input("x", trt.float32, (2, 3))


# -- arguments of add_* -------------------------------------------------------------------------

@case("network/add_elementwise_x_x_42", Raises(ModelError, "add_elementwise",
                                               "ElementWiseOperation"))
def _(c):
    net = _net()
    x = _x(net)
    net.add_elementwise(x, x, 42)


@case("network/add_input_x_float32_abc", Raises(ModelError, "'x'", "'abc'"))
def _(c):
    _net().add_input("x", trt.float32, "abc")


@case("network/add_input_shape_of_floats", Raises(ModelError, "'x'", "2.5"))
def _(c):
    _net().add_input("x", trt.float32, (2.5, 3))


@case("network/add_input_shape_none", Raises(ModelError, "'x'", "None"))
def _(c):
    _net().add_input("x", trt.float32, None)


@case("network/add_input_negative_dimension", Raises(ModelError, "'x'", "-2"))
def _(c):
    _net().add_input("x", trt.float32, (-2, 3))


@case("network/add_input_huge_dimension", Raises(ModelError, "'x'", "int64"))
def _(c):
    _net().add_input("x", trt.float32, (10**30, 3))


@case("network/add_input_dtype_nonsense", Raises(ModelError, "'nonsense'"))
def _(c):
    _net().add_input("x", "nonsense", (2,))


@case("network/add_input_dtype_object", Raises(ModelError, "object"))
def _(c):
    _net().add_input("x", object, (2,))


@case("network/add_input_twice", Raises(ModelError, "'x'", "twice"))
def _(c):
    net = _net()
    _x(net)
    _x(net)


@case("network/add_activation_type_999", Raises(ModelError, "add_activation",
                                                "ActivationType"))
def _(c):
    net = _net()
    net.add_activation(_x(net), 999)


@case("network/add_unary_op_string", Raises(ModelError, "add_unary", "UnaryOperation"))
def _(c):
    net = _net()
    net.add_unary(_x(net), "sqrt")


@case("network/add_matrix_multiply_op_none", Raises(ModelError, "add_matrix_multiply",
                                                    "MatrixOperation"))
def _(c):
    net = _net()
    x = _x(net)
    net.add_matrix_multiply(x, None, x, trt.MatrixOperation.NONE)


@case("network/add_reduce_axes_string", Raises(ModelError, "add_reduce", "'rows'"))
def _(c):
    net = _net()
    net.add_reduce(_x(net), trt.ReduceOperation.SUM, "rows", False)


@case("network/add_reduce_axes_beyond_the_rank", Raises(ModelError, "Reduce layer", "axes"))
def _(c):
    net = _net()
    net.mark_output(net.add_reduce(_x(net), trt.ReduceOperation.SUM, 1 << 20, False)
                    .get_output(0))
    ig.load(net)


@case("network/add_cast_to_nonsense", Raises(ModelError, "'float99'"))
def _(c):
    net = _net()
    net.add_cast(_x(net), "float99")


@case("network/add_gather_axis_beyond_the_rank", Raises(ModelError, "Gather layer", "axis"))
def _(c):
    net = _net()
    i = _const(net, np.array([0], np.int32))
    net.mark_output(net.add_gather(_x(net), i, 7).get_output(0))
    ig.load(net)


@case("network/add_slice_start_not_integers", Raises(ModelError, "add_slice", "'a'"))
def _(c):
    net = _net()
    net.add_slice(_x(net), "ab", (1, 1), (1, 1))


@case("network/add_constant_weights_that_do_not_fill_the_shape",
      Raises(ModelError, "Constant layer", "5 weights"))
def _(c):
    _net().add_constant((2, 3), np.ones(5, np.float32))


@case("network/add_constant_of_python_objects", Raises(ModelError, "Constant layer", "object"))
def _(c):
    _net().add_constant((2,), np.array([object(), object()]))


@case("network/add_concatenation_of_nothing", Raises(ModelError, "Concatenation layer"))
def _(c):
    _net().add_concatenation([])


@case("network/tensor_from_another_network", Raises(ModelError, "another network"))
def _(c):
    other = _net()
    y = _x(other)
    net = _net()
    net.add_elementwise(_x(net), y, E.SUM)


@case("network/numpy_array_instead_of_a_tensor", Raises(ModelError, "expected a network tensor",
                                                        "ndarray"))
def _(c):
    net = _net()
    net.add_elementwise(_x(net), np.ones((2, 3), np.float32), E.SUM)


@case("network/mark_output_of_a_string", Raises(ModelError, "mark_output", "str"))
def _(c):
    _net().mark_output("y")


@case("network/get_output_index_99", Ok())
def _(c):
    net = _net()  # TensorRT's bindings give None for an output index out of range
    assert net.add_activation(_x(net), trt.ActivationType.RELU).get_output(99) is None


@case("network/set_input_index_minus_one", Raises(ModelError, "no input -1"))
def _(c):
    net = _net()
    x = _x(net)
    net.add_activation(x, trt.ActivationType.RELU).set_input(-1, x)


@case("network/input_shape_set_to_garbage", Raises(ModelError, "'x'", "'??'"))
def _(c):
    net = _net()
    _x(net).shape = "??"


@case("network/network_without_outputs", Raises(ModelError, "no outputs"))
def _(c):
    net = _net()
    net.add_activation(_x(net), trt.ActivationType.RELU)
    ig.load(net)


@case("network/two_outputs_with_one_name", Raises(ModelError, "'y'"))
def _(c):
    net = _net()
    x = _x(net)
    for _ in range(2):
        t = net.add_activation(x, trt.ActivationType.RELU).get_output(0)
        t.name = "y"
        net.mark_output(t)
    ig.load(net)


@case("network/hostile_loop_name_reaches_the_message", Raises(ModelError, "evil\nname ☃",
                                                               "trip limit"))
def _(c):
    net, loop = _counting_loop()
    loop.name = "evil\nname ☃"
    loop.trip_limits.clear()
    ig.load(net)


# -- loops --------------------------------------------------------------------------------------

@case("network/counting_loop_valid", Ok(), backends=BOTH)
def _(c):
    net, _ = _counting_loop()
    out = ig.load(net).run({"x": np.zeros(2, np.float32)}, backend=c.backend)
    assert_close(out["last"], np.full(2, 3, np.float32))
    assert_close(out["seq"], np.array([[0, 0], [1, 1], [2, 2]], np.float32))


@case("network/trip_limit_kind_7", Raises(ModelError, "add_trip_limit", "TripLimit"))
def _(c):
    net = _net()
    net.add_loop().add_trip_limit(_const(net, np.int32(3)), 7)


@case("network/loop_output_kind_string", Raises(ModelError, "add_loop_output", "LoopOutput"))
def _(c):
    net = _net()
    loop = net.add_loop()
    loop.add_loop_output(loop.add_recurrence(_x(net)).get_output(0), "last")


@case("network/iterator_axis_string", Raises(ModelError, "add_iterator", "'rows'"))
def _(c):
    net = _net()
    net.add_loop().add_iterator(_x(net), "rows")


@case("network/loop_without_a_trip_limit", Raises(ModelError, "counter", "trip limit"))
def _(c):
    net, loop = _counting_loop()
    loop.trip_limits.clear()
    ig.load(net)


@case("network/loop_with_two_count_limits", Raises(ModelError, "counter", "COUNT"))
def _(c):
    net, loop = _counting_loop()
    loop.add_trip_limit(_const(net, np.int32(5)), trt.TripLimit.COUNT)
    ig.load(net)


@case("network/count_limit_of_type_float", Raises(ModelError, "counter"))
def _(c):
    net = _net()
    x = net.add_input("x", trt.float32, (2,))
    loop = net.add_loop()
    loop.name = "counter"
    loop.add_trip_limit(_const(net, np.float32(3.7)), trt.TripLimit.COUNT)
    rec = loop.add_recurrence(x)
    rec.set_input(1, rec.get_output(0))
    net.mark_output(loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE)
                    .get_output(0))
    ig.load(net)


@case("network/recurrence_without_a_next_value", Raises(ModelError, "counter", "Recurrence layer"))
def _(c):
    net = _net()
    x = net.add_input("x", trt.float32, (2,))
    loop = net.add_loop()
    loop.name = "counter"
    loop.add_trip_limit(_const(net, np.int32(3)), trt.TripLimit.COUNT)
    rec = loop.add_recurrence(x)
    net.mark_output(loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE)
                    .get_output(0))
    ig.load(net)


@case("network/while_loop_that_never_ends", Raises(IterationLimitError, "counter",
                                                   "max_iterations=30"), backends=BOTH)
def _(c):
    net = _net()
    x = net.add_input("x", trt.float32, (2,))
    loop = net.add_loop()
    loop.name = "counter"
    go = loop.add_recurrence(_const(net, np.array(True)))
    go.set_input(1, go.get_output(0))
    loop.add_trip_limit(go.get_output(0), trt.TripLimit.WHILE)
    rec = loop.add_recurrence(x)
    rec.set_input(1, rec.get_output(0))
    net.mark_output(loop.add_loop_output(rec.get_output(0), trt.LoopOutput.LAST_VALUE)
                    .get_output(0))
    ig.load(net).run({"x": np.zeros(2, np.float32)}, backend=c.backend, max_iterations=30)


@case("network/concatenate_output_of_length_1e9",
      Raises(ExecutionError, "'counter'", "output 1 ('seq')", "length 1000000000",
             "more than this process can allocate"), isolate=True)
@case("network/concatenate_output_of_length_1e9",
      Raises(ExecutionError, "'counter'", "output 1 ('seq')", "length 1000000000",
             "more than this process can allocate"), isolate=True, backends=("jax",))
def _(c):
    # three iterations padded to 10**9 rows of two floats (8 GB): more than the cap allows
    net, _ = _counting_loop(length=10**9)
    ig.load(net).run({"x": np.ones(2, np.float32)}, backend=c.backend)


@case("network/concatenate_length_shorter_than_the_iterations",
      Raises(ExecutionError, "counter"), backends=BOTH)
def _(c):
    net, _ = _counting_loop(count=5, length=2)
    ig.load(net).run({"x": np.ones(2, np.float32)}, backend=c.backend)


@case("network/negative_count_runs_no_iteration", Ok(), backends=BOTH)
def _(c):
    net, _ = _counting_loop(count=-4, length=0)
    out = ig.load(net).run({"x": np.ones(2, np.float32)}, backend=c.backend)
    assert_close(out["last"], np.ones(2, np.float32))
    assert out["seq"].shape == (0, 2)


# -- attributes set after creation --------------------------------------------------------------

@case("network/shuffle_reshape_dims_set_to_a_string", Raises(ModelError, "Shuffle layer",
                                                             "'a'"))
def _(c):
    net = _net()
    s = net.add_shuffle(_x(net))
    s.reshape_dims = "abc"
    net.mark_output(s.get_output(0))
    ig.load(net)


@case("network/shuffle_reshape_dims_beyond_int64", Raises(ModelError, "Shuffle layer"))
def _(c):
    net = _net()
    s = net.add_shuffle(_x(net))
    s.reshape_dims = (10**20,)
    net.mark_output(s.get_output(0))
    ig.load(net)


@case("network/activation_alpha_set_to_a_string", Raises(ModelError, "Activation layer",
                                                         "'big'"))
def _(c):
    net = _net()
    a = net.add_activation(_x(net), trt.ActivationType.LEAKY_RELU)
    a.alpha = "big"
    net.mark_output(a.get_output(0))
    ig.load(net)


@case("network/if_condition_of_type_float", Raises(ModelError, "condition"))
def _(c):
    net = _net()
    x = _x(net)
    cond = net.add_if_conditional()
    cond.set_condition(net.add_input("c", trt.float32, ()))
    t = cond.add_input(x).get_output(0)
    out = cond.add_output(t, t).get_output(0)
    net.mark_output(out)
    ig.load(net)


@case("network/slice_of_a_huge_size", Raises(ModelError, "Slice layer", "outside"))
def _(c):
    net = _net()
    net.mark_output(net.add_slice(_x(net), (0, 0), (10**12, 1), (1, 1)).get_output(0))
    ig.load(net)


@case("network/output_named_as_an_input", Raises(ModelError, "network output 'x'",
                                                  "name of a network input"))
def _(c):
    # a fuzzer finding (`network/counting_loop|net_name|1271828049`, `--seed 20021`): an output
    # renamed to the input's name ran, and was written to ONNX as 'x_1'
    net = _net()
    t = net.add_activation(_x(net), trt.ActivationType.RELU).get_output(0)
    t.name = "x"
    net.mark_output(t)
    ig.load(net)


@case("network/input_marked_as_an_output_valid", Ok(), backends=BOTH)
def _(c):
    net = _net()
    x = _x(net)
    net.mark_output(x)
    y = net.add_activation(x, trt.ActivationType.RELU).get_output(0)
    y.name = "y"
    net.mark_output(y)
    v = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    out = ig.load(net).run({"x": v}, backend=c.backend)
    assert_close(out["x"], v)
    assert_close(out["y"], np.maximum(v, 0))


@case("network/chain_of_3000_layers_valid", Ok())
def _(c):
    # a fuzzer finding (`network/layers|net_wide|889864020`, `--seed 20021`): reading a shape
    # at the end of a chain of 500 layers re-inferred them recursively (RecursionError), and
    # every layer added re-inferred all before it (2,000 layers: 23 s to build)
    import time

    net = _net()
    t = _x(net)
    start = time.monotonic()
    for _ in range(3000):
        t = net.add_unary(t, trt.UnaryOperation.NEG).get_output(0)
    assert time.monotonic() - start < 5, "building the chain is not linear"
    t.name = "y"
    net.mark_output(t)
    v = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    assert_close(ig.load(net).run({"x": v}, backend=c.backend)["y"], v)


@case("network/add_input_of_nine_dimensions", Raises(ModelError, "'c'", "9 dimensions"))
def _(c):
    # a fuzzer finding (`network/conditional|net_input|461823231`, `--seed 20022`): accepted,
    # then a raw ValueError from Dims when the shape was read; TensorRT's Dims hold 8
    _net().add_input("c", trt.bool, (1,) * 9)


@case("network/shuffle_to_ten_dimensions", Raises(ModelError, "Shuffle layer", "10 dimensions"))
def _(c):
    net = _net()
    s = net.add_shuffle(_x(net))
    s.reshape_dims = (1,) * 9 + (6,)
    net.mark_output(s.get_output(0))
    ig.load(net)


@case("network/loop_output_kind_set", Raises(ModelError, "LoopOutput layer", "'kind'"))
def _(c):
    # a fuzzer finding (`network/while_loop|net_attr|2013183444`, `--seed 20022`): a raw
    # AttributeError (a read-only property); a setter's bad value was a raw ValueError
    net = _net()
    x = _x(net)
    loop = net.add_loop()
    out = loop.add_loop_output(loop.add_recurrence(x).get_output(0), trt.LoopOutput.LAST_VALUE)
    try:
        net.add_shuffle(x).first_transpose = "ab"
    except ModelError as e:
        assert "first_transpose" in str(e), e
    out.kind = trt.LoopOutput.CONCATENATE


@case("network/onnx_parser_of_a_chain_of_2000_nodes_valid", Ok())
def _(c):
    # the parser names every layer it adds, and a name set re-inferred every layer before it
    # (500 nodes: 7.5 s to parse); a file path of None was a raw TypeError
    import time

    from onnx import TensorProto
    from onnx import helper as h

    n = 2000
    nodes = [h.make_node("Neg", [f"t{k}"], [f"t{k + 1}"], name=f"n{k}") for k in range(n)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("t0", TensorProto.FLOAT, [2])],
                     [h.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, None)])
    data = h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()
    net = _net()
    parser = trt.OnnxParser(net, trt.Logger())
    assert parser.parse_from_file(None) is False and parser.num_errors == 1
    parser.clear_errors()
    start = time.monotonic()
    assert parser.parse(data), [str(parser.get_error(i)) for i in range(parser.num_errors)]
    assert time.monotonic() - start < 5, "parsing a chain is not linear"
    v = np.array([1.5, -2.0], np.float32)
    assert_close(ig.load(net).run({"t0": v})[f"t{n}"], v)


@case("network/unary_op_set_to_a_huge_integer", Raises(ModelError, "Unary layer", "'op'",
                                                        "UnaryOperation"))
def _(c):
    # a fuzzer finding (`network/conditional|net_attr|1357918539`, `--seed 20025`): an
    # operation set after creation was not checked, and building the network raised a raw
    # AttributeError; an enum attribute now stays a member of its enum
    net = _net()
    net.add_unary(_x(net), trt.UnaryOperation.NEG).op = np.int64(2**62)


# -- what TensorRT's bindings and build refuse (hostile input, round three) ----------------------

def _conditional(false_shape, condition=None):
    """``y = -x if c else x[:2, :2]`` over ``x`` [2, 3]; `condition` a constant, or an input
    ``c`` when None."""
    net = _net()
    x = net.add_input("x", trt.float32, (2, 3))
    c = net.add_input("c", trt.bool, ()) if condition is None else _const(net, condition)
    cond = net.add_if_conditional()
    cond.name = "pick"
    cond.set_condition(c)
    xin = cond.add_input(x).get_output(0)
    neg = net.add_unary(xin, trt.UnaryOperation.NEG).get_output(0)
    part = net.add_slice(xin, (0, 0), false_shape, (1, 1)).get_output(0)
    out = cond.add_output(neg, part)
    out.name = "pick_out"
    out.get_output(0).name = "y"
    net.mark_output(out.get_output(0))
    return net


@case("network/conditional_branch_outputs_of_other_shapes",
      Raises(ModelError, "conditional 'pick'", "same shape", "(2, 3)", "(2, 2)"))
def _(c):
    # TensorRT: "IIfConditionalOutputLayer inputs must have the same shape"; accepted before
    _conditional((2, 2))


@case("network/conditional_branch_outputs_of_other_shapes_constant_condition_valid", Ok())
def _(c):
    # a build-time constant condition: only the branch taken counts (TensorRT's If reference)
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    for cv, want in ((True, -xv), (False, xv[:2, :2])):
        got = ig.load(_conditional((2, 2), np.array(cv))).run({"x": xv})["y"]
        assert_close(got, want)


@case("network/attribute_a_layer_does_not_have", Raises(ModelError, "Unary layer", "'axis'"))
def _(c):
    # TensorRT's bindings raise AttributeError for an attribute an object does not define
    # (it was stored and ignored); the error is an AttributeError and a ModelError
    net = _net()
    layer = net.add_unary(_x(net), trt.UnaryOperation.NEG)
    for obj, key in ((layer.get_output(0), "axes"), (net.add_loop(), "shape"), (net, "axis"),
                     (net.add_if_conditional(), "reverse")):
        try:
            setattr(obj, key, 1)
        except AttributeError:
            continue
        raise AssertionError(f"{obj!r}.{key} was accepted")
    layer.axis = 1


@case("network/cast_to_int4", Raises(ModelError, "Cast layer", "INT4"))
def _(c):
    # TensorRT's cast layer has no INT4 (nor FP8, FP4): it wrapped, where INT8 saturates
    net = _net()
    net.add_cast(_x(net), trt.int4)


@case("network/identity_output_type_int8", Raises(ModelError, "Identity layer", "INT8"))
def _(c):
    # IIdentityLayer converts FLOAT to UINT8, INT32 or BOOL only; INT8 was ignored
    net = _net()
    layer = net.add_identity(_x(net))
    layer.set_output_type(0, trt.int8)
    net.mark_output(layer.get_output(0))
    ig.load(net)


@case("network/output_binding_int8_over_a_float_layer", Raises(ModelError, "'y'", "INT8",
                                                                "FLOAT"))
def _(c):
    # TensorRT 10 refuses an output type incompatible with its layer's (it wrapped 300 to 44)
    net = _net()
    y = net.add_identity(_x(net)).get_output(0)
    y.name = "y"
    net.mark_output(y)
    y.dtype = trt.int8
    ig.load(net)


@case("network/identity_output_type_int32_and_uint8_valid", Ok(), backends=BOTH)
def _(c):
    # TensorRT's operator reference: identity with output type INT32 gives [1.1, 2.4, 3.7 ...]
    # as [1, 2, 3 ...] (the tensor stays FLOAT); to UINT8 as its cast layer (260.0 -> 4)
    xv = np.array([1.1, 2.4, 3.7, 9.9, -0.5, 260.0], np.float32)
    for to, want in ((trt.int32, np.trunc(xv)), (trt.uint8, [1, 2, 3, 9, 0, 4])):
        net = _net()
        layer = net.add_identity(net.add_input("x", trt.float32, (6,)))
        layer.set_output_type(0, to)
        net.mark_output(layer.get_output(0))
        got = ig.load(net).run({"x": xv}, backend=c.backend)
        assert_close(next(iter(got.values())), np.asarray(want, np.float32))


@case("network/convolution_stride_and_kernel_of_zero",
      Raises(ModelError, "Convolution layer", "stride_nd", "(0, 1)"))
def _(c):
    # a stride of 0 was a raw ZeroDivisionError reading the output's shape, a kernel of
    # (0, 0) a raw AttributeError when the network was built
    net = _net()
    x = net.add_input("x", trt.float32, (1, 1, 2, 3))
    zero = net.add_convolution_nd(x, 1, (0, 0), np.ones(0, np.float32), None)
    net.mark_output(zero.get_output(0))
    try:
        ig.load(net)
    except ModelError as e:
        assert "window (0, 0)" in str(e), e
    else:
        raise AssertionError("a kernel of (0, 0) was accepted")
    net.unmark_output(zero.get_output(0))
    conv = net.add_convolution_nd(x, 1, (1, 1), np.ones(1, np.float32), None)
    conv.stride_nd = (0, 1)
    net.mark_output(conv.get_output(0))
    ig.load(net)


@case("network/linspace_fill_of_2e40_elements", Raises(ExecutionError, "Fill"), backends=BOTH,
      isolate=True)
def _(c):
    # a static LINSPACE was folded while the network was built: a raw MemoryError
    net = _net()
    net.mark_output(net.add_fill((2**40,), trt.FillOperation.LINSPACE).get_output(0))
    ig.load(net).run({}, backend=c.backend)


@case("network/lrn_window_of_zero", Raises(ModelError, "LRN layer", "window_size 0"))
def _(c):
    # a raw ZeroDivisionError when the network was built; TensorRT's window is odd, 1 to 15
    net = _net()
    x = net.add_input("x", trt.float32, (1, 1, 2, 3))
    try:
        net.add_lrn(x, 3, 1.0, 0.0, 1.0)
    except ModelError as e:
        assert "beta" in str(e), e
    else:
        raise AssertionError("a beta of 0 was accepted (TensorRT: 0.01 to 1e5)")
    net.mark_output(net.add_lrn(x, 0, 1.0, 1.0, 1.0).get_output(0))
