"""RandomUniform-8 and Multinomial-13 against OpenVINO: read (as ``org.openvinotoolkit`` ops),
run on NumPy and JAX (a fallback segment), written back. Seeded outputs are compared
exactly, over successive runs too (OpenVINO's RandomUniform continues its sequence from one
``infer`` to the next). ONNX's generators differ, so there is no ONNX Runtime leg; the ONNX
copy keeps the ``org.openvinotoolkit`` ops."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import openvino as ov
import openvino.opset8 as ops8
import openvino.opset13 as ops13
import pytest
from opcheck import check_op
from ov_helpers import CONFIG, CORE, save

import itergraph as ig
from itergraph.backends.common.mersenne import mt_words, random_uniform_mt
from itergraph.backends.common.philox import philox_blocks, random_uniform

rng = np.random.default_rng(13)


def _uniform(shape, lo, hi, out_type, gs, os_, shape_type=np.int64):
    s = ops8.constant(np.asarray(shape, shape_type))
    return ops8.random_uniform(s, ops8.constant(lo), ops8.constant(hi), out_type, gs, os_)


def _ov_runs(model: ov.Model, feeds: dict, runs: int) -> list[list[np.ndarray]]:
    req = CORE.compile_model(model, "CPU", CONFIG).create_infer_request()
    out = []
    for _ in range(runs):
        r = req.infer(feeds)
        out.append([np.asarray(r[o]).copy() for o in req.model_outputs])
    return out


def _ig_runs(path, feeds: dict, runs: int, backend: str) -> list[list[np.ndarray]]:
    m = ig.load(path)
    return [list(m.run(feeds, backend=backend).values()) for _ in range(runs)]


@pytest.mark.parametrize("out_type,lo,hi", [
    ("f32", np.float32(0), np.float32(1)),
    ("f32", np.float32(-3.5), np.float32(7.25)),
    ("f32", np.float32(1e-3), np.float32(7e4)),
    ("i32", np.int32(-7), np.int32(100)),
    ("i32", np.int32(-2**30), np.int32(2**30)),
    ("i32", np.int32(0), np.int32(2**31 - 1)),
    ("i32", np.int32(50), np.int32(51)),
])
@pytest.mark.parametrize("seeds", [(150, 10), (0, 1), (2**40 + 3, 2**35 + 9)])
def test_random_uniform(out_type, lo, hi, seeds, tmp_path):
    y = _uniform([3, 7, 5], lo, hi, out_type, *seeds)
    check_op([y], [], {}, tmp_path, rtol=0, atol=0, to_onnx=False)


@pytest.mark.parametrize("shape", [[0], [2, 0, 3], [1]])
def test_random_uniform_empty_and_single(shape, tmp_path):
    y = _uniform(shape, np.float32(0), np.float32(1), "f32", 4, 5)
    check_op([y], [], {}, tmp_path, rtol=0, atol=0, to_onnx=False)


@pytest.mark.parametrize("shape_type", [np.int32, np.int64])
def test_random_uniform_large_and_shape_types(shape_type, tmp_path):
    # 5001 elements: OpenVINO splits the work among threads, and the last block is partial
    y = _uniform([3, 1667], np.float32(-1), np.float32(1), "f32", 5, 6, shape_type)
    check_op([y], [], {}, tmp_path, rtol=0, atol=0, to_onnx=False)


def test_random_uniform_runtime_inputs(tmp_path):
    """Shape, min and max given at run time."""
    s = ops8.parameter([2], np.int64, name="s")
    lo = ops8.parameter([], np.float32, name="lo")
    hi = ops8.parameter([1], np.float32, name="hi")
    y = ops8.random_uniform(s, lo, hi, "f32", 42, 7)
    feeds = {"s": np.array([4, 9], np.int64), "lo": np.float32(-2), "hi": np.array([3],
                                                                                   np.float32)}
    check_op([y], [s, lo, hi], feeds, tmp_path, rtol=0, atol=0, to_onnx=False)


@pytest.mark.parametrize("out_type,lo,hi", [("f32", np.float32(-1), np.float32(2)),
                                            ("i32", np.int32(0), np.int32(1000))])
def test_random_uniform_state_advances_between_runs(out_type, lo, hi, tmp_path):
    """Each run continues the sequence (256 blocks skipped per element), as in OpenVINO; the
    written-back model does the same in OpenVINO."""
    x = ops8.parameter([1], np.float32, name="x")
    y = _uniform([6, 5], lo, hi, out_type, 150, 10)
    z = ops8.add(ops8.convert(y, "f32"), x)
    model = ov.Model([y.output(0), z.output(0)], [x])
    path = save(model, tmp_path)
    feeds = {"x": np.zeros(1, np.float32)}
    want = _ov_runs(model, feeds, 3)
    assert not np.array_equal(want[0][0], want[1][0])
    for backend in ("numpy", "jax"):
        got = _ig_runs(path, feeds, 3, backend)
        for run in range(3):
            for a, b in zip(got[run], want[run]):
                np.testing.assert_array_equal(a, b, err_msg=f"{backend} run {run}")
    written = tmp_path / "written.xml"
    ig.save(ig.load(path), written)
    again = _ov_runs(CORE.read_model(str(written)), feeds, 3)
    for run in range(3):
        np.testing.assert_array_equal(again[run][0], want[run][0])


def test_random_uniform_spec_examples():
    """The three Philox examples of OpenVINO's RandomUniform-8 specification."""
    got = random_uniform((3, 3), np.float32(0), np.float32(1), np.float32, 150, 10, 0)
    np.testing.assert_allclose(got.reshape(-1)[:3], [0.7011236, 0.30539632, 0.93931055],
                               rtol=1e-7)
    got = random_uniform((2, 2), 2.0, 10.0, np.float64, 80, 100, 0)
    np.testing.assert_allclose(got, [[5.65927959, 4.23122376], [2.67008206, 2.36423758]],
                               rtol=1e-8)
    got = random_uniform((2, 3), np.int32(50), np.int32(100), np.int32, 80, 100, 0)
    np.testing.assert_array_equal(got, [[65, 70, 56], [59, 82, 92]])


def _f32_path(count, lo, hi, gs, os_):
    """What OpenVINO's CPU plugin computes for a non-f32 float type: f32 values, converted."""
    return random_uniform((count,), np.float32(lo), np.float32(hi), np.float32, gs, os_, 0)


@pytest.mark.parametrize("out_type,np_type", [("f16", np.float16), ("f64", np.float64),
                                              ("bf16", ml_dtypes.bfloat16)])
def test_random_uniform_other_floats_follow_the_spec(out_type, np_type, tmp_path):
    """f16, bf16 and f64 take 10, 7 and 52 random mantissa bits as the specification says;
    OpenVINO's CPU plugin computes f16 and f64 as f32 and converts, and its bf16 values follow
neither (asserted: spec disagreements).
    Written back, OpenVINO reads the same layer."""
    lo, hi = np_type(-2), np_type(5)
    if out_type == "bf16":  # OpenVINO's Python constants take no bfloat16 array
        lo_n = ops8.convert(ops8.constant(np.float32(-2)), "bf16")
        hi_n = ops8.convert(ops8.constant(np.float32(5)), "bf16")
    else:
        lo_n, hi_n = ops8.constant(lo), ops8.constant(hi)
    y = ops8.random_uniform(ops8.constant(np.array([64], np.int64)), lo_n, hi_n, out_type, 9, 4)
    model = ov.Model([y.output(0)], [])
    want = _ov_runs(model, {}, 1)[0][0]
    got = list(ig.load(save(model, tmp_path)).run({}).values())[0]
    spec = random_uniform((64,), lo, hi, np_type, 9, 4, 0)
    np.testing.assert_array_equal(got, spec)
    assert len(np.unique(got.astype(np.float64))) > 16  # values spread over [lo, hi)
    assert got.min() >= lo and got.max() < hi
    if out_type != "bf16":  # the plugin's bf16 values follow neither rule
        plugin = _f32_path(64, -2, 5, 9, 4).astype(np_type)
        np.testing.assert_array_equal(want.astype(np.float64), plugin.astype(np.float64))
    assert not np.array_equal(want.astype(np.float64), got.astype(np.float64))


@pytest.mark.parametrize("hi", [10**6, 10**12])
def test_random_uniform_i64_follows_the_spec(hi, tmp_path):
    """i64 takes two words per element (the first the high one) as f64 does in the
    specification; OpenVINO's CPU plugin runs i64 as i32 (one word per element, the bounds
    cast to 32 bits): asserted as a disagreement."""
    y = _uniform([40], np.int64(-7), np.int64(hi), "i64", 77, 3)
    model = ov.Model([y.output(0)], [])
    want = _ov_runs(model, {}, 1)[0][0]
    got = list(ig.load(save(model, tmp_path)).run({}).values())[0]
    words = philox_blocks(77, 3, 0, 20).reshape(-1, 2).astype(np.uint64)
    wide = (words[:, 0] << np.uint64(32)) | words[:, 1]
    np.testing.assert_array_equal(got, (wide % np.uint64(hi + 7)).astype(np.int64) - 7)
    assert not np.array_equal(got, want)
    if hi < 2**31:
        as_i32 = random_uniform((40,), np.int32(-7), np.int32(hi), np.int32, 77, 3, 0)
        np.testing.assert_array_equal(want, as_i32.astype(np.int64))
    else:
        assert got.max() > 2**32 and want.max() < 2**31  # the plugin never leaves 32 bits


def test_random_uniform_i32_range_beyond_int32(tmp_path):
    """``max - min`` above 2**31 - 1: the specification's ``x mod (max - min)`` is taken over
    the integers; OpenVINO's CPU plugin overflows (here every value is ``min``): asserted."""
    lo, hi = np.int32(-2**31), np.int32(2**31 - 1)
    y = _uniform([50], lo, hi, "i32", 77, 3)
    model = ov.Model([y.output(0)], [])
    want = _ov_runs(model, {}, 1)[0][0]
    got = list(ig.load(save(model, tmp_path)).run({}).values())[0]
    words = philox_blocks(77, 3, 0, 13)[:50].astype(np.int64)
    np.testing.assert_array_equal(got, words % (2**32 - 1) - 2**31)
    assert (want == lo).all()


def test_random_uniform_zero_seeds_are_not_deterministic(tmp_path):
    y = _uniform([100], np.float32(0), np.float32(1), "f32", 0, 0)
    path = save(ov.Model([y.output(0)], []), tmp_path)
    m1, m2 = ig.load(path), ig.load(path)
    a, b = list(m1.run({}).values())[0], list(m1.run({}).values())[0]
    c = list(m2.run({}).values())[0]
    assert not np.array_equal(a, b) and not np.array_equal(a, c)
    assert 0 <= a.min() and a.max() < 1


def _uniform_pt(n, lo, hi, out_type, gs, os_=0):
    return ops8.random_uniform(ops8.constant(np.array([n], np.int64)), lo, hi, out_type, gs,
                               os_, "pytorch")


@pytest.mark.parametrize("out_type,lo,hi", [
    ("f32", np.float32(0), np.float32(1)),
    ("f32", np.float32(-2), np.float32(5)),
    ("i32", np.int32(-5), np.int32(1000)),
    ("i64", np.int64(3), np.int64(70000)),
])
@pytest.mark.parametrize("seeds", [(150, 0), (3, 99), (2**33 + 5, 1)])
@pytest.mark.parametrize("n", [9, 1500])  # 1500: more than one Mersenne state of 624 words
def test_random_uniform_pytorch(out_type, lo, hi, seeds, n, tmp_path):
    """``alignment="pytorch"``: MT19937 words; the same numbers at every run, as in
    OpenVINO."""
    y = _uniform_pt(n, ops8.constant(lo), ops8.constant(hi), out_type, *seeds)
    if out_type == "i64":  # OpenVINO runs i64 as i32 (one word: the spec's rule for small
        y = ops8.convert(y, "i32")  # bounds too), so compare through i32
    g, want = check_op([y], [], {}, tmp_path, rtol=0, atol=0, to_onnx=False)
    path = save(ov.Model([y.output(0)], []), tmp_path, "again")
    for backend in ("numpy", "jax"):
        runs = _ig_runs(path, {}, 2, backend)
        np.testing.assert_array_equal(runs[1][0], want[0])


@pytest.mark.parametrize("out_type,np_type", [("f16", np.float16), ("f64", np.float64)])
def test_random_uniform_pytorch_other_floats_follow_the_spec(out_type, np_type, tmp_path):
    """f16 takes 11 bits of a word and f64 53 bits of two, as the specification says; the CPU
    plugin computes both as f32 (24 bits of one word) and converts: asserted."""
    y = _uniform_pt(700, ops8.constant(np_type(-2)), ops8.constant(np_type(5)), out_type, 150)
    model = ov.Model([y.output(0)], [])
    want = _ov_runs(model, {}, 1)[0][0]
    got = list(ig.load(save(model, tmp_path)).run({}).values())[0]
    np.testing.assert_array_equal(got, random_uniform_mt((700,), np_type(-2), np_type(5),
                                                         np_type, 150))
    assert got.min() >= -2 and got.max() < 5 and len(np.unique(got)) > 100
    as_f32 = random_uniform_mt((700,), np.float32(-2), np.float32(5), np.float32, 150)
    np.testing.assert_array_equal(want, as_f32.astype(np_type))
    assert not np.array_equal(got, want)


def test_random_uniform_pytorch_i64_beyond_32_bits(tmp_path):
    """i64 with a bound above 2**32 - 1 takes two words per element (spec); the plugin keeps
    to 32 bits: asserted."""
    y = _uniform_pt(50, ops8.constant(np.int64(-5)), ops8.constant(np.int64(10**12)), "i64", 7)
    model = ov.Model([y.output(0)], [])
    want = _ov_runs(model, {}, 1)[0][0]
    got = list(ig.load(save(model, tmp_path)).run({}).values())[0]
    w = mt_words(7, 100).reshape(-1, 2).astype(np.uint64)
    wide = (w[:, 0] << np.uint64(32)) | w[:, 1]
    np.testing.assert_array_equal(got, (wide % np.uint64(10**12 + 5)).astype(np.int64) - 5)
    assert got.max() > 2**32 and np.abs(want).max() < 2**31


def test_random_uniform_onnx_copy_keeps_the_openvino_op(tmp_path):
    y = _uniform([4], np.float32(0), np.float32(1), "f32", 1, 2)
    m = ig.load(save(ov.Model([y.output(0)], []), tmp_path))
    ig.save(m, tmp_path / "m.onnx")
    nodes = onnx.load(str(tmp_path / "m.onnx")).graph.node
    assert [(n.domain, n.op_type) for n in nodes] == [("org.openvinotoolkit", "RandomUniform")]
    back = list(ig.load(tmp_path / "m.onnx").run({}).values())[0]
    np.testing.assert_array_equal(back, list(m.run({}).values())[0])


# ------------------------------------------------------------------------------ Multinomial

def _probs(batch, classes, dtype=np.float32, zeros=False):
    p = rng.uniform(0.05, 1.0, (batch, classes)).astype(dtype)
    if zeros:
        p[:, ::3] = 0
    return p


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize("log_probs", [False, True])
@pytest.mark.parametrize("convert_type", ["i32", "i64"])
@pytest.mark.parametrize("seeds", [(7, 3), (1, 0), (123456, 654321)])
def test_multinomial(replace, log_probs, convert_type, seeds, tmp_path):
    batch, classes, n = 3, 9, 6
    p = ops13.parameter([batch, classes], np.float32, name="p")
    y = ops13.multinomial(p, ops13.constant(np.array([n], np.int64)), convert_type, replace,
                          log_probs, *seeds)
    probs = _probs(batch, classes)
    if log_probs:
        probs = np.log(probs)
    check_op([y], [p], {"p": probs}, tmp_path, rtol=0, atol=0, to_onnx=False)


@pytest.mark.parametrize("replace", [True, False])
def test_multinomial_f16_probs(replace, tmp_path):
    p = ops13.parameter([3, 9], np.float16, name="p")
    y = ops13.multinomial(p, ops13.constant(np.array([6], np.int64)), "i32", replace, False, 7,
                          3)
    check_op([y], [p], {"p": _probs(3, 9, np.float16)}, tmp_path, rtol=0, atol=0,
             to_onnx=False)


@pytest.mark.parametrize("replace", [True, False])
def test_multinomial_zero_probabilities_and_scalar_count(replace, tmp_path):
    p = ops13.parameter([-1, 12], np.float32, name="p")
    y = ops13.multinomial(p, ops13.constant(np.int32(5)), "i32", replace, False, 11, 5)
    probs = _probs(4, 12, zeros=True)
    g, want = check_op([y], [p], {"p": probs}, tmp_path, rtol=0, atol=0, to_onnx=False)
    assert not np.isin(want[0], np.arange(0, 12, 3)).any()  # never a class of probability 0


def test_multinomial_runtime_count_and_repeatable_runs(tmp_path):
    """The count given at run time; every run draws the same numbers, as in OpenVINO."""
    p = ops13.parameter([2, 5], np.float32, name="p")
    n = ops13.parameter([1], np.int64, name="n")
    y = ops13.multinomial(p, n, "i64", True, False, 21, 2)
    model = ov.Model([y.output(0)], [p, n])
    feeds = {"p": _probs(2, 5), "n": np.array([40], np.int64)}
    want = _ov_runs(model, feeds, 2)
    assert np.array_equal(want[0][0], want[1][0])
    path = save(model, tmp_path)
    for backend in ("numpy", "jax"):
        for got in _ig_runs(path, feeds, 2, backend):
            np.testing.assert_array_equal(got[0], want[0][0])


def test_random_uniform_in_a_loop_body(tmp_path):
    """Inside a Loop the sequence advances at every iteration and across runs, as in
    OpenVINO; the written-back loop does the same in OpenVINO."""
    x = ops8.parameter([1, 2], np.float32, name="x")
    bx = ops8.parameter([1, 2], np.float32, name="bx")
    r = _uniform([1, 2], np.float32(0), np.float32(1), "f32", 5, 6)
    acc = ops8.add(bx, r)
    body = ov.Model([ops8.constant(np.array(True)).output(0), acc.output(0), r.output(0)], [bx])
    loop = ops8.loop(ops8.constant(np.int64(4)), ops8.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(bx, x.output(0), acc.output(0))
    model = ov.Model([loop.get_iter_value(acc.output(0), -1),
                      loop.get_concatenated_slices(r.output(0), 0, 1, 1, -1, 0)], [x])
    path = save(model, tmp_path)
    feeds = {"x": np.zeros((1, 2), np.float32)}
    want = _ov_runs(model, feeds, 2)
    assert len(np.unique(np.concatenate([w[1] for w in want]))) == 16
    for backend in ("numpy", "jax"):
        got = _ig_runs(path, feeds, 2, backend)
        for run in range(2):
            for a, b in zip(got[run], want[run]):
                np.testing.assert_array_equal(a, b, err_msg=f"{backend} run {run}")
    written = tmp_path / "written.xml"
    ig.save(ig.load(path), written)
    again = _ov_runs(CORE.read_model(str(written)), feeds, 2)
    for run in range(2):
        np.testing.assert_array_equal(again[run][1], want[run][1])
