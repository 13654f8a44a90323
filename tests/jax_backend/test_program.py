"""Whole-graph behaviour: static partial evaluation, 64-bit types without global state,
large constants as arguments, run-time errors, the persistent compilation cache."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from jaxutil import compare, onnx_graph, vi
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import itergraph as ig
from itergraph.backends import jax as jb


def test_shape_gather_concat_reshape_chain_stays_static():
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("Gather", ["s", "i0"], ["d0"], axis=0),
             h.make_node("Unsqueeze", ["d0", "ax"], ["d0v"]),
             h.make_node("Concat", ["d0v", "m1"], ["shape"], axis=0),
             h.make_node("Reshape", ["x", "shape"], ["r"]),
             h.make_node("Shape", ["r"], ["rs"]),
             h.make_node("ReduceProd", ["rs"], ["n"], keepdims=0),
             h.make_node("Range", ["zero", "n", "one"], ["idx"]),
             h.make_node("Cast", ["idx"], ["y"], to=T.FLOAT)]
    g = onnx_graph(nodes, [vi("x", T.FLOAT, None)], [vi("r", T.FLOAT, None),
                                                     vi("y", T.FLOAT, None)],
                   {"i0": np.array(0), "ax": np.array([0]), "m1": np.array([-1]),
                    "zero": np.array(0), "one": np.array(1)})
    for shape in [(2, 3, 4), (5, 1)]:
        _, cg = compare(g, {"x": np.ones(shape, np.float32)})
    step = cg.root.last_plan.steps[0]
    assert set(step.static_out) == {v.uid for v in g.outputs if v.name == "y"}  # folded


def test_loop_trip_count_from_a_shape_is_a_scan():
    body = h.make_graph([h.make_node("Identity", ["c"], ["co"]),
                         h.make_node("Add", ["a", "one"], ["ao"])], "b",
                        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("a", T.FLOAT, [])],
                        [vi("co", T.BOOL, []), vi("ao", T.FLOAT, [])],
                        [h.make_tensor("one", T.FLOAT, [], [1.0])])
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("ReduceProd", ["s"], ["n"], keepdims=0),
             h.make_node("Loop", ["n", "", "a0"], ["a"], body=body, name="L")]
    g = onnx_graph(nodes, [vi("x", T.FLOAT, None), vi("a0", T.FLOAT, [])],
                   [vi("a", T.FLOAT, [])])
    got, cg = compare(g, {"x": np.ones((3, 4), np.float32), "a0": np.float32(0)})
    assert float(got["a"]) == 12
    assert [r.reason for r in cg.explain() if r.element == "Loop node 'L'"] == [
        "lax.scan over 12 iterations"]


def test_64_bit_types_are_exact_and_do_not_leak_into_global_jax_state():
    import jax
    import jax.numpy as jnp

    before = jax.config.jax_enable_x64
    nodes = [h.make_node("Mul", ["a", "b"], ["p"]), h.make_node("Add", ["i", "j"], ["s"])]
    g = onnx_graph(nodes, [vi("a", T.DOUBLE, [2]), vi("b", T.DOUBLE, [2]),
                           vi("i", T.INT64, [2]), vi("j", T.INT64, [2])],
                   [vi("p", T.DOUBLE, [2]), vi("s", T.INT64, [2])])
    big = np.array([2**40 + 1, -(2**50)], np.int64)
    got, _ = compare(g, {"a": np.array([1 / 3, 1e-200]), "b": np.array([3.0, 1e-10]),
                         "i": big, "j": big})
    assert got["p"].dtype == np.float64 and got["s"].dtype == np.int64
    assert got["p"][1] == 1e-200 * 1e-10 and got["s"][0] == 2 * (2**40 + 1)
    assert jax.config.jax_enable_x64 == before
    if not before:
        assert jnp.asarray(1.0).dtype == np.float32


def test_large_constants_are_arguments_only_past_the_embedding_budget(monkeypatch):
    from itergraph.backends.jax import big_constants

    w = np.random.default_rng(0).standard_normal((200, 100)).astype(np.float32)
    g = onnx_graph([h.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", T.FLOAT, [3, 200])],
                   [vi("y", T.FLOAT, None)], {"w": w})
    _, cg = compare(g, {"x": np.ones((3, 200), np.float32)}, rtol=1e-4)
    assert not cg.root.last_plan.steps[0].big_uids  # 80 kB: embedded
    monkeypatch.setattr(big_constants, "EMBED_BYTES", w.nbytes - 1)
    _, cg = compare(g, {"x": np.ones((3, 200), np.float32)}, rtol=1e-4)
    assert cg.root.last_plan.steps[0].big_uids  # passed as a device array


def test_run_time_index_error_is_reported():
    g = onnx_graph([h.make_node("Gather", ["x", "i"], ["y"], name="g")],
                   [vi("x", T.FLOAT, [3]), vi("i", T.INT64, [])], [vi("y", T.FLOAT, [])])
    cg = jb.compile_graph(g)
    assert float(cg.run({"x": np.arange(3, dtype=np.float32), "i": np.array(-1)})["y"]) == 2
    with pytest.raises(ig.ExecutionError, match="Gather node 'g'.*out of range"):
        cg.run({"x": np.arange(3, dtype=np.float32), "i": np.array(3)})


def test_outputs_are_numpy_arrays_including_inputs_passed_through():
    g = onnx_graph([h.make_node("Identity", ["x"], ["y"])], [vi("x", T.FLOAT, [2])],
                   [vi("y", T.FLOAT, [2]), vi("x", T.FLOAT, [2])])
    out = jb.compile_graph(g).run({"x": np.ones(2, np.float32)})
    assert list(out) == ["y", "x"] and all(type(v) is np.ndarray for v in out.values())


def test_model_run_with_the_jax_backend():
    from onnx import numpy_helper

    m = h.make_model(h.make_graph([h.make_node("Tanh", ["x"], ["y"])], "g",
                                  [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])]),
                     opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    assert numpy_helper  # (models go through ig.load like any user's)
    model = ig.load(m)
    x = np.array([0.5, -1], np.float32)
    np.testing.assert_allclose(model.run({"x": x}, backend="jax")["y"], np.tanh(x), rtol=1e-6)


def test_persistent_compilation_cache_is_opt_in(tmp_path):
    script = (
        "import numpy as np\n"
        "from onnx import helper as h, TensorProto as T\n"
        "from itergraph.frontends.onnx import read\n"
        "from itergraph.backends import jax as jb\n"
        "g = h.make_graph([h.make_node('Sin', ['x'], ['y'])], 'g',\n"
        "    [h.make_tensor_value_info('x', T.FLOAT, [3])],\n"
        "    [h.make_tensor_value_info('y', T.FLOAT, [3])])\n"
        "m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)], ir_version=8)\n"
        "print(jb.compile_graph(read(m)).run({'x': np.ones(3, np.float32)})['y'][0])\n"
    )
    env = dict(os.environ, ITERGRAPH_JAX_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert abs(float(out.stdout.strip()) - np.sin(1.0)) < 1e-6
    assert any((tmp_path / "cache").iterdir())


def test_small_integer_inputs_needed_as_constants_become_known_values():
    """A reshape target or reduction axes given as a graph input: plans are made per value
    of it (the input is promoted to a known value), instead of falling back to NumPy."""
    nodes = [h.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0),
             h.make_node("Reshape", ["s", "shape"], ["y"])]
    g = onnx_graph(nodes, [vi("x", T.FLOAT, None), vi("axes", T.INT64, [1]),
                           vi("shape", T.INT64, [2])], [vi("y", T.FLOAT, None)])
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    cg = None
    for axes, shape in [([0], [4, 3]), ([1], [2, 4]), ([0], [4, 3]), ([0], [2, 6])]:
        feeds = {"x": x, "axes": np.array(axes), "shape": np.array(shape)}
        got, cg = compare(g, feeds) if cg is None else (cg.run(feeds), cg)
        np.testing.assert_array_equal(got["y"], x.sum(axis=axes[0]).reshape(shape))
    assert len(cg.root.plans) == 3  # one per distinct (axes, shape)
    assert all(r.compiles for r in cg.explain())


def test_dynamic_slice_by_the_iteration_number_and_bailout_to_numpy():
    """x[i : i + 2] in a loop body: a dynamic slice of static size; when the run-time bounds
    would give another size (past the end), the run is redone on NumPy."""
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["co"]),
         h.make_node("Add", ["i", "two"], ["e"]),
         h.make_node("Unsqueeze", ["i", "ax"], ["s1"]),
         h.make_node("Unsqueeze", ["e", "ax"], ["e1"]),
         h.make_node("Slice", ["x", "s1", "e1"], ["piece"]),
         h.make_node("ReduceSum", ["piece"], ["ps"], keepdims=0),
         h.make_node("Add", ["a", "ps"], ["ao"])], "b",
        [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("a", T.FLOAT, [])],
        [vi("co", T.BOOL, []), vi("ao", T.FLOAT, [])],
        [h.make_tensor("two", T.INT64, [], [2]), h.make_tensor("ax", T.INT64, [1], [0])])
    g = onnx_graph([h.make_node("Loop", ["M", "", "a0"], ["a"], body=body, name="L")],
                   [vi("M", T.INT64, []), vi("a0", T.FLOAT, []), vi("x", T.FLOAT, [6])],
                   [vi("a", T.FLOAT, [])])
    x = np.arange(1, 7, dtype=np.float32)
    feeds = {"M": np.array(5), "a0": np.float32(0), "x": x}
    got, cg = compare(g, feeds)
    assert float(got["a"]) == sum(x[k:k + 2].sum() for k in range(5)) and cg.bailouts == 0
    feeds["M"] = np.array(6)  # the last slice x[5:7] holds one element: NumPy's answer
    want = sum(x[k:k + 2].sum() for k in range(6))
    assert float(cg.run(feeds)["a"]) == want and cg.bailouts == 1


def _window_loop(ends_nodes: list):
    """A while loop whose carried start i reads a 2 x 3 window of x at rows i, i + 1 (starts
    ``Concat(i, 0)``, a run-time vector; ends made by `ends_nodes`), as jax2onnx writes
    ``lax.dynamic_slice(x, (i, 0), (2, 3))``: column maxima summed while the sum stays
    under t and the next window fits, i advancing by 1 or 2 with the data."""
    body = h.make_graph(
        [h.make_node("Unsqueeze", ["i", "ax"], ["i1"]),
         h.make_node("Concat", ["i1", "zero1"], ["starts"], axis=0),
         *ends_nodes,
         h.make_node("Slice", ["x", "starts", "ends", "axes"], ["w"]),
         h.make_node("ReduceMax", ["w", "ax"], ["m"], keepdims=0),
         h.make_node("Add", ["acc", "m"], ["acc_o"]),
         h.make_node("Gather", ["m", "zero"], ["m0"], axis=0),
         h.make_node("Greater", ["m0", "fzero"], ["big"]),
         h.make_node("Where", ["big", "two", "one"], ["step"]),
         h.make_node("Add", ["i", "step"], ["i_o"]),
         h.make_node("ReduceSum", ["acc_o", "ax"], ["tot"], keepdims=0),
         h.make_node("Less", ["tot", "t"], ["go"]),
         h.make_node("Add", ["i_o", "two"], ["end_next"]),
         h.make_node("LessOrEqual", ["end_next", "rows"], ["fits"]),
         h.make_node("And", ["go", "fits"], ["c_o"])], "b",
        [vi("k", T.INT64, []), vi("c", T.BOOL, []), vi("i", T.INT64, []),
         vi("acc", T.FLOAT, [3])],
        [vi("c_o", T.BOOL, []), vi("i_o", T.INT64, []), vi("acc_o", T.FLOAT, [3])],
        [h.make_tensor("ax", T.INT64, [1], [0]), h.make_tensor("zero1", T.INT64, [1], [0]),
         h.make_tensor("zero", T.INT64, [], [0]), h.make_tensor("one", T.INT64, [], [1]),
         h.make_tensor("two", T.INT64, [], [2]), h.make_tensor("fzero", T.FLOAT, [], [0.0]),
         h.make_tensor("size", T.INT64, [2], [2, 3]), h.make_tensor("axes", T.INT64, [2], [0, 1]),
         h.make_tensor("three", T.INT64, [1], [3])])
    nodes = [h.make_node("Shape", ["x"], ["shape"]),
             h.make_node("Gather", ["shape", "r0"], ["rows"], axis=0),
             h.make_node("Loop", ["M", "", "i0", "acc0"], ["i_f", "acc_f"], body=body,
                         name="L")]
    inputs = [vi("M", T.INT64, []), vi("i0", T.INT64, []), vi("acc0", T.FLOAT, [3]),
              vi("x", T.FLOAT, [7, 3]), vi("t", T.FLOAT, [])]
    outputs = [vi("i_f", T.INT64, []), vi("acc_f", T.FLOAT, [3])]
    inits = {"r0": np.array(0)}
    m = h.make_model(h.make_graph(nodes, "g", inputs, outputs,
                                  [numpy_helper.from_array(v, k) for k, v in inits.items()]),
                     opset_imports=[h.make_opsetid("", 21)])
    return m, onnx_graph(nodes, inputs, outputs, inits)


#: ends = starts + [2, 3] (jax2onnx's form); ends = Concat(i + 2, 3), built apart
ENDS = {"added": [h.make_node("Add", ["starts", "size"], ["ends"])],
        "built_apart": [h.make_node("Add", ["i", "two"], ["i2"]),
                        h.make_node("Unsqueeze", ["i2", "ax"], ["i2v"]),
                        h.make_node("Concat", ["i2v", "three"], ["ends"], axis=0)]}


def _window_feeds(m=100, t=4.0):
    x = np.random.default_rng(3).uniform(-1, 1, (7, 3)).astype(np.float32)
    return {"M": np.array(m), "i0": np.array(0), "acc0": np.zeros(3, np.float32), "x": x,
            "t": np.array(t, np.float32)}


def _like_ort(m, got: dict, feeds: dict) -> None:
    import onnxruntime as ort

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6, err_msg=k)


@pytest.mark.parametrize("ends", ENDS)
def test_two_axis_window_at_a_run_time_start_compiles(ends):
    """The window's starts are a run-time vector, not a scalar plus constants, yet its size
    is known: a dynamic slice on the first axis, a static one on the second. The loop runs
    on XLA and `explain` says so before and after the run. ONNX Runtime is the oracle."""
    m, g = _window_loop(ENDS[ends])
    for feeds in (_window_feeds(), _window_feeds(t=100.0)):
        got, cg = compare(g, feeds)  # asserts every record compiles
        _like_ort(m, got, feeds)
        assert cg.bailouts == 0
    assert all(r.compiles for r in jb.explain(g))


def test_two_axis_window_past_the_end_is_numpys_answer():
    """Starting at row 6 of 7, the first window is clamped to one row: its size is not the
    static one, and the run-time check sends that run to NumPy (ONNX Runtime's answer)."""
    m, g = _window_loop([h.make_node("Add", ["starts", "size"], ["ends"])])
    feeds = _window_feeds(t=100.0)
    feeds["i0"] = np.array(6)  # the first window x[6:8] holds one row
    cg = jb.compile_graph(g)
    _like_ort(m, cg.run(feeds), feeds)
    assert cg.bailouts == 1


def test_window_of_a_data_dependent_size_runs_on_numpy():
    """ends = starts + Concat(i, 3): a window of i rows, i carried and moved by the data; the
    size is not known while tracing, the loop runs on NumPy (ONNX Runtime's answer) and the
    records say so."""
    m, g = _window_loop([h.make_node("Unsqueeze", ["i", "ax"], ["iv"]),
                         h.make_node("Concat", ["iv", "three"], ["sz"], axis=0),
                         h.make_node("Add", ["starts", "sz"], ["ends"])])
    feeds = _window_feeds()
    feeds["i0"] = np.array(1)
    cg = jb.compile_graph(g)
    _like_ort(m, cg.run(feeds), feeds)
    (rec,) = [r for r in cg.explain() if not r.compiles]
    assert "differ by a known amount" in rec.reason


def test_sequence_and_empty_optional_inputs_go_to_numpy():
    nodes = [h.make_node("SequenceLength", ["seq"], ["n"]),
             h.make_node("Cast", ["n"], ["nf"], to=T.FLOAT),
             h.make_node("Mul", ["nf", "x"], ["y"])]
    seq_t = h.make_tensor_sequence_value_info("seq", T.FLOAT, None)
    g = onnx_graph(nodes, [seq_t, vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, None)])
    feeds = {"seq": [np.ones(2, np.float32)] * 3, "x": np.array([1, 2], np.float32)}
    got, cg = compare(g, feeds, compiled=False)
    np.testing.assert_array_equal(got["y"], [3, 6])
    (rec,) = [r for r in cg.explain() if not r.compiles]
    assert "SequenceLength" in rec.element and "sequence" in rec.reason
