"""Loop forms torch.onnx writes that the OpenVINO IR writer once got wrong (found by the
``torch-unseen`` corpus source, whose entries cover the others): a carried value whose rank
changes between iterations."""

from __future__ import annotations

import pytest
from onnx import helper as h

import itergraph as ig
from onnx_builders import I64, B, F, body, model, vi


def test_carried_value_that_changes_rank_is_refused(tmp_path):
    """``z = z.unsqueeze(0)`` carried: the body result has rank 2 where the value entered
    with rank 1; an OpenVINO back edge keeps one rank, so the writer refuses, naming it."""
    nodes = [h.make_node("Constant", [], ["ax"], value=h.make_tensor("a", I64, [1], [0])),
             h.make_node("Unsqueeze", ["z_in", "ax"], ["z_out"]),
             h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("z_in", F, [3])],
             [vi("c_out", B, []), vi("z_out", F, [1, 3])])
    m = model([h.make_node("Loop", ["M", "", "z0"], ["z"], body=b)],
              [vi("M", I64, []), vi("z0", F, [3])], [vi("z", F, ["d0", "d1"])], opset=17)
    with pytest.raises(ig.UnsupportedError, match="carried value 0 .* rank 1 .* rank 2"):
        ig.save(ig.load(m), tmp_path / "m.xml")


def _loop_of_unknown_step_rank():
    """``ys = [x.reshape(s) for _ in range(M)]`` stacked: the per-step value's rank is the
    length of `s`, known only at run time."""
    nodes = [h.make_node("Identity", ["c_in"], ["c_out"]),
             h.make_node("Reshape", ["x", "s"], ["y"])]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, [])], [vi("c_out", B, []), vi("y", F, None)])
    return model([h.make_node("Loop", ["M", ""], ["ys"], body=b, name="stack")],
                 [vi("M", I64, []), vi("x", F, [2, 3]), vi("s", I64, ["k"])],
                 [vi("ys", F, ["n", "d1", "d2"])], opset=17)


@pytest.mark.parametrize("iterations", [0, 2])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_stacked_output_of_unknown_step_rank_reloads_with_ort_shape(tmp_path, iterations,
                                                                   backend):
    """Zero iterations of a step of unknown rank: ONNX Runtime gives ``(0,)``; the IR the
    writer makes (an unsqueezed step joined on axis 0) reloads and gives the same."""
    import numpy as np

    from onnx_builders import run_ort

    m = _loop_of_unknown_step_rank()
    feeds = {"M": np.array(iterations, np.int64),
             "x": np.arange(6, dtype=np.float32).reshape(2, 3), "s": np.array([3, 2])}
    want = run_ort(m, feeds)["ys"]
    xml = tmp_path / "m.xml"
    ig.save(ig.load(m), xml)
    for model_ in (m, xml):
        got = ig.load(model_).run(feeds, backend=backend)["ys"]
        assert got.shape == want.shape, (str(model_)[:20], got.shape, want.shape)
        np.testing.assert_array_equal(got, want)


def _growing_cache_not_an_output(static: bool):
    """``cache = concat(cache, x)`` every iteration and ``acc += cache.sum(1)``: the cache
    grows, and only `acc` leaves the loop (as a decoder's K/V cache: read, never returned).
    `static`: the model's inputs have fixed shapes, as ``convert --input-shapes`` writes."""
    def dims(*d):
        return list(d) if static else [f"s{i}" for i in range(len(d))]

    nodes = [h.make_node("Concat", ["cache_in", "x"], ["cache_out"], axis=1),
             h.make_node("ReduceSum", ["cache_out", "one"], ["total"], keepdims=0),
             h.make_node("Add", ["acc_in", "total"], ["acc_out"]),
             h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("cache_in", F, [2, None]),
                     vi("acc_in", F, [2])],
             [vi("c_out", B, []), vi("cache_out", F, [2, None]), vi("acc_out", F, [2])])
    one = h.make_tensor("one", I64, [1], [1])
    loop = h.make_node("Loop", ["M", "", "cache0", "acc0"], ["cache", "acc"], body=b)
    return model([loop], [vi("M", I64, []), vi("cache0", F, dims(2, 3)), vi("x", F, dims(2, 1)),
                          vi("acc0", F, dims(2))],
                 [vi("acc", F, dims(2))], opset=17, inits=[one])


@pytest.mark.parametrize("static", [True, False])
def test_carried_value_that_grows_and_is_not_returned_runs_in_openvino(tmp_path, static):
    """OpenVINO gives a back-edged Parameter the shape of the value entering the loop and
    widens it only for back edges that are also Loop outputs: with static input shapes, a
    cache the loop reads but does not return was compiled with its first length (wrong
    values from the second iteration on). The writer makes such a value a Loop output;
    ``dead-ports`` first removes the unused output the ONNX Loop has."""
    import numpy as np
    from ov_helpers import run_ov

    from onnx_builders import run_ort

    m = _growing_cache_not_an_output(static)
    rng = np.random.default_rng(0)
    feeds = {"M": np.array(4, np.int64), "cache0": rng.random((2, 3), np.float32),
             "x": rng.random((2, 1), np.float32), "acc0": np.zeros(2, np.float32)}
    want = run_ort(m, feeds)["acc"]
    xml = tmp_path / "m.xml"
    ig.save(ig.optimize(ig.load(m), ["dead-ports"]), xml)
    got = run_ov(xml, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5)


#: corpus entries OpenVINO got wrong or failed on once written with fixed input shapes
FIXED_SHAPES = {
    # ``for row in x: if row.sum() > 0: rows.append(row)``: a TensorIterator never widens its
    # back-edged Parameter (0 rows where torch gives 2), so the loop is a Loop-5 widened
    "torch-unseen/rows_filter_cat_op14": "grown in an If",
    "torch-unseen/rows_filter_cat_op17": "grown in an If",
    # tf2onnx's ``i < n`` with `n` computed from a shape, constant once shapes are fixed:
    # compile_model threw vector::_M_range_check; `n` is now carried unchanged
    "tf/foldl_init_op18": "condition reads a folded invariant",
    "tf/map_fn_rows_op7": "condition reads a folded invariant",
}


@pytest.mark.parametrize("entry", sorted(FIXED_SHAPES))
def test_corpus_loop_with_fixed_shapes_runs_in_openvino(entry, tmp_path):
    import sys
    from pathlib import Path

    import numpy as np
    from ov_helpers import run_ov

    sys.path.insert(0, str(Path(__file__).parents[1] / "realworld"))
    import corpus

    e = next(x for x in corpus.entries() if x.id == entry)
    feeds = e.feeds()
    fixed = ig.load(e.file).with_input_shapes({k: np.shape(v) for k, v in feeds.items()})
    ig.save(fixed, tmp_path / "m.xml")
    for got, want in zip(run_ov(tmp_path / "m.xml", feeds), e.expected(), strict=True):
        np.testing.assert_allclose(got, want, rtol=e.rtol, atol=e.atol)


@pytest.mark.parametrize("scan_axis,out_axis", [(0, 0), (1, 0), (1, 1), (0, -1)])
def test_statically_empty_scan_written_without_the_loop(tmp_path, scan_axis, out_axis):
    """A Scan over an input declared with a zero-length scan axis runs no iteration. OpenVINO's
    CPU plugin dies (SIGFPE, the whole process) compiling a loop of static iteration count 0,
    so the writer writes the results instead: the state as it came in, the scan output empty
    in the shape both backends give."""
    import numpy as np
    import openvino as ov

    x_shape = [0, 3] if scan_axis == 0 else [3, 0]
    nodes = [h.make_node("Add", ["s_in", "x_t"], ["s_out"]),
             h.make_node("Mul", ["x_t", "x_t"], ["y_t"])]
    b = body(nodes, [vi("s_in", F, [3]), vi("x_t", F, [3])], [vi("s_out", F, [3]),
                                                              vi("y_t", F, [3])])
    m = model([h.make_node("Scan", ["s0", "x"], ["s", "ys"], body=b, num_scan_inputs=1,
                           scan_input_axes=[scan_axis], scan_output_axes=[out_axis])],
              [vi("s0", F, [3]), vi("x", F, x_shape)], [vi("s", F, [3]), vi("ys", F, ["d0", "d1"])],
              opset=17)
    feeds = {"s0": np.arange(3, dtype=np.float32), "x": np.zeros(x_shape, np.float32)}
    want = ig.load(m).run(feeds, backend="numpy")
    ig.save(ig.load(m), tmp_path / "m.xml")
    compiled = ov.Core().compile_model(str(tmp_path / "m.xml"), "CPU")
    got = compiled(feeds)
    for name in ("s", "ys"):
        out = next(o for o in compiled.outputs if name in o.names)
        assert got[out].shape == want[name].shape, name
        np.testing.assert_array_equal(got[out], want[name])
