"""ONNX Loop semantics the public node suite does not cover, against ORT and plain Python loops."""

import numpy as np
import pytest
from onnx import helper as h

import itergraph as ig
from onnx_builders import I64, B, F, assert_same, body, const, model, run_ig, run_ort, vi


def counter_loop(elem_shape=(), opset=21):
    """Loop(M, cond, x): x += 1 each iteration; scan output y = x * 2 (shape elem_shape)."""
    b = body(
        [h.make_node("Add", ["x_in", "one"], ["x_out"]),
         h.make_node("Mul", ["x_in", "two"], ["y"]),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, list(elem_shape))],
        [vi("c_out", B, []), vi("x_out", F, list(elem_shape)), vi("y", F, list(elem_shape))],
        [const("one", 1.0, np.float32), const("two", 2.0, np.float32)],
    )
    return model(
        [h.make_node("Loop", ["M", "cond", "x0"], ["x", "ys"], body=b, name="counter")],
        [vi("M", I64, []), vi("cond", B, []), vi("x0", F, list(elem_shape))],
        [vi("x", F, list(elem_shape)), vi("ys", F, [None, *elem_shape])], opset=opset,
    )


def python_counter(n, cond, x0):
    x, ys = x0.copy(), []
    for _ in range(n if cond else 0):
        ys.append(x * 2)
        x = x + 1
    return x, ys


@pytest.mark.parametrize("elem_shape", [(), (2, 3)])
@pytest.mark.parametrize("n,cond", [(0, True), (3, False), (4, True)])
def test_counts_zero_iterations_and_stacking(elem_shape, n, cond):
    m = counter_loop(elem_shape)
    x0 = np.arange(int(np.prod(elem_shape)), dtype=np.float32).reshape(elem_shape)
    feeds = {"M": np.array(n), "cond": np.array(cond), "x0": x0}
    got = run_ig(m, feeds)
    assert_same(got, run_ort(m, feeds))
    x, ys = python_counter(n, cond, x0)
    np.testing.assert_array_equal(got["x"], x)
    assert got["ys"].shape == (len(ys), *elem_shape)  # scalars -> (N,), rank 2 -> (N, a, b)
    if ys:
        np.testing.assert_array_equal(got["ys"], np.stack(ys))


def trip_count_1d_model():
    """Loop(M of shape [1]): x += 1."""
    b = body([h.make_node("Add", ["x_in", "one"], ["x_out"]),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [])],
             [vi("c_out", B, []), vi("x_out", F, [])], [const("one", 1.0, np.float32)])
    return model([h.make_node("Loop", ["M", "", "x0"], ["x"], body=b)],
                 [vi("M", I64, [1]), vi("x0", F, [])], [vi("x", F, [])])


def test_trip_count_as_one_element_1d_tensor():
    m = trip_count_1d_model()
    feeds = {"M": np.array([5]), "x0": np.zeros((), np.float32)}
    assert_same(run_ig(m, feeds), run_ort(m, feeds))
    assert float(run_ig(m, feeds)["x"]) == 5.0


def while_model(trip_input=True):
    """Loop(M=INT64_MAX, cond): x = x * 2 + i while x < limit (captured)."""
    b = body(
        [h.make_node("Cast", ["i"], ["fi"], to=F),
         h.make_node("Mul", ["x_in", "two"], ["x2"]),
         h.make_node("Add", ["x2", "fi"], ["x_out"]),
         h.make_node("Less", ["x_out", "limit"], ["c_out"]),
         h.make_node("Identity", ["x_out"], ["trace"])],
        [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [])],
        [vi("c_out", B, []), vi("x_out", F, []), vi("trace", F, [])],
        [const("two", 2.0, np.float32)],
    )
    return model(
        [h.make_node("Loop", ["M" if trip_input else "", "cond", "x0"], ["x", "xs"], body=b)],
        [*( [vi("M", I64, [])] if trip_input else []), vi("cond", B, []), vi("x0", F, []),
         vi("limit", F, [])],
        [vi("x", F, []), vi("xs", F, [None])],
    )


def python_while(x0, limit, cond=True):
    x, xs, i = float(x0), [], 0
    while cond:
        x = x * 2 + i
        xs.append(x)
        cond = x < limit
        i += 1
    return x, xs


def test_int64_max_trip_count_with_condition_that_ends_the_loop():
    m = while_model()
    feeds = {"M": np.array(np.iinfo(np.int64).max), "cond": np.array(True),
             "x0": np.ones((), np.float32), "limit": np.array(1000.0, np.float32)}
    got = run_ig(m, feeds)
    assert_same(got, run_ort(m, feeds))
    x, xs = python_while(1.0, 1000.0)
    assert float(got["x"]) == x and got["xs"].tolist() == xs


def test_while_loop_without_trip_count_and_false_initial_condition():
    m = while_model(trip_input=False)
    for cond in (True, False):
        feeds = {"cond": np.array(cond), "x0": np.ones((), np.float32),
                 "limit": np.array(50.0, np.float32)}
        got = run_ig(m, feeds)
        assert_same(got, run_ort(m, feeds))
        if not cond:
            assert got["xs"].shape == (0,) and float(got["x"]) == 1.0


def runaway_model():
    """Loop(cond) whose condition never changes: runs forever."""
    b = body([h.make_node("Identity", ["c_in"], ["c_out"]),
              h.make_node("Identity", ["x_in"], ["x_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [])],
             [vi("c_out", B, []), vi("x_out", F, [])])
    return model([h.make_node("Loop", ["", "cond", "x0"], ["x"], body=b, name="forever")],
                 [vi("cond", B, []), vi("x0", F, [])], [vi("x", F, [])])


def test_runaway_loop_stopped_by_max_iterations():
    m = runaway_model()
    with pytest.raises(ig.IterationLimitError, match="forever"):
        run_ig(m, {"cond": np.array(True), "x0": np.zeros((), np.float32)}, max_iterations=1000)


def doubling_model():
    """Loop(M): x = concat(x, x), a carried value that changes shape."""
    b = body([h.make_node("Concat", ["x_in", "x_in"], ["x_out"], axis=0),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [None])],
             [vi("c_out", B, []), vi("x_out", F, [None])])
    return model([h.make_node("Loop", ["M", "", "x0"], ["x"], body=b)],
                 [vi("M", I64, []), vi("x0", F, [None])], [vi("x", F, [None])])


def test_carried_value_that_changes_shape():
    m = doubling_model()
    feeds = {"M": np.array(3), "x0": np.array([1.0, 2.0], np.float32)}
    got = run_ig(m, feeds)
    assert_same(got, run_ort(m, feeds))
    assert got["x"].shape == (16,)


def growing_scan_output_model():
    """Loop(M): x = concat(x, x), also a scan output, whose shape must not change."""
    b = body([h.make_node("Concat", ["x_in", "x_in"], ["x_out"], axis=0),
              h.make_node("Identity", ["x_out"], ["y"]),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [None])],
             [vi("c_out", B, []), vi("x_out", F, [None]), vi("y", F, [None])])
    return model([h.make_node("Loop", ["M", "", "x0"], ["x", "ys"], body=b, name="grower")],
                 [vi("M", I64, []), vi("x0", F, [None])],
                 [vi("x", F, [None]), vi("ys", F, [None, None])])


def test_scan_output_that_changes_shape_is_an_error_naming_loop_output_and_iteration():
    m = growing_scan_output_model()
    with pytest.raises(ig.Error, match=r"grower.*output 1.*'ys'.*iteration 1"):
        run_ig(m, {"M": np.array(3), "x0": np.array([1.0], np.float32)})


def if_in_body_model():
    """Loop(M): x = x + i on even iterations, x - i on odd ones (an If in the body)."""
    then_b = body([h.make_node("Add", ["x_in", "i_f"], ["r"])], [], [vi("r", F, [])])
    else_b = body([h.make_node("Sub", ["x_in", "i_f"], ["r2"])], [], [vi("r2", F, [])])
    b = body(
        [h.make_node("Cast", ["i"], ["i_f"], to=F),
         h.make_node("Mod", ["i", "two"], ["m"]),
         h.make_node("Equal", ["m", "zero"], ["even"]),
         h.make_node("If", ["even"], ["x_out"], then_branch=then_b, else_branch=else_b),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [])],
        [vi("c_out", B, []), vi("x_out", F, [])],
        [const("two", 2), const("zero", 0)],
    )
    return model([h.make_node("Loop", ["M", "", "x0"], ["x"], body=b)],
                 [vi("M", I64, []), vi("x0", F, [])], [vi("x", F, [])])


def test_if_inside_loop_body():
    m = if_in_body_model()
    feeds = {"M": np.array(7), "x0": np.zeros((), np.float32)}
    got = run_ig(m, feeds)
    assert_same(got, run_ort(m, feeds))
    x = 0.0
    for i in range(7):
        x = x + i if i % 2 == 0 else x - i
    assert float(got["x"]) == x


def nested_loops_model():
    """acc += a (outer graph) + i (loop 1 iteration) + j (loop 2) + k (loop 3)."""
    l3 = body(
        [h.make_node("Add", ["a", "fi"], ["s1"]), h.make_node("Add", ["s1", "fj"], ["s2"]),
         h.make_node("Cast", ["k"], ["fk"], to=F), h.make_node("Add", ["s2", "fk"], ["s3"]),
         h.make_node("Add", ["acc3", "s3"], ["acc3_out"]),
         h.make_node("Identity", ["c3"], ["c3_out"])],
        [vi("k", I64, []), vi("c3", B, []), vi("acc3", F, [])],
        [vi("c3_out", B, []), vi("acc3_out", F, [])], name="l3")
    l2 = body(
        [h.make_node("Cast", ["j"], ["fj"], to=F),
         h.make_node("Loop", ["n3", "", "acc2"], ["acc2_out"], body=l3),
         h.make_node("Identity", ["c2"], ["c2_out"])],
        [vi("j", I64, []), vi("c2", B, []), vi("acc2", F, [])],
        [vi("c2_out", B, []), vi("acc2_out", F, [])], name="l2")
    l1 = body(
        [h.make_node("Cast", ["i"], ["fi"], to=F),
         h.make_node("Loop", ["n2", "", "acc1"], ["acc1_out"], body=l2),
         h.make_node("Identity", ["c1"], ["c1_out"]),
         h.make_node("Identity", ["acc1_out"], ["trace"])],
        [vi("i", I64, []), vi("c1", B, []), vi("acc1", F, [])],
        [vi("c1_out", B, []), vi("acc1_out", F, []), vi("trace", F, [])], name="l1")
    return model([h.make_node("Loop", ["n1", "", "acc0"], ["acc", "traces"], body=l1)],
                 [vi("n1", I64, []), vi("n2", I64, []), vi("n3", I64, []), vi("a", F, []),
                  vi("acc0", F, [])], [vi("acc", F, []), vi("traces", F, [None])])


def test_three_nested_loops_capturing_from_every_enclosing_scope():
    m = nested_loops_model()
    feeds = {"n1": np.array(3), "n2": np.array(4), "n3": np.array(5),
             "a": np.array(0.5, np.float32), "acc0": np.zeros((), np.float32)}
    got = run_ig(m, feeds)
    assert_same(got, run_ort(m, feeds))
    acc, traces = 0.0, []
    for i in range(3):
        for j in range(4):
            for k in range(5):
                acc += 0.5 + i + j + k
        traces.append(acc)
    assert float(got["acc"]) == acc and got["traces"].tolist() == traces


def test_body_input_shadows_outer_value_of_the_same_name():
    # the outer graph has a value "x_in"; the body's own input "x_in" must win inside the body
    b = body([h.make_node("Add", ["x_in", "one"], ["x_out"]),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [])],
             [vi("c_out", B, []), vi("x_out", F, [])], [const("one", 1.0, np.float32)])
    m = model([h.make_node("Mul", ["x0", "x0"], ["x_in"]),
               h.make_node("Loop", ["M", "", "x0"], ["x"], body=b),
               h.make_node("Add", ["x", "x_in"], ["y"])],
              [vi("M", I64, []), vi("x0", F, [])], [vi("y", F, [])])
    feeds = {"M": np.array(4), "x0": np.array(3.0, np.float32)}
    got = run_ig(m, feeds)
    assert_same(got, run_ort(m, feeds))
    assert float(got["y"]) == 3 + 4 + 9


def test_negative_trip_count_runs_no_iteration_as_onnx_runtime_does():
    m = counter_loop()
    feeds = {"M": np.array(-1), "cond": np.array(True), "x0": np.ones((), np.float32)}
    got = run_ig(m, feeds)
    assert_same(got, run_ort(m, feeds))
    assert got["ys"].shape == (0,)
