"""Prepared models (`Model.compile` -> `Session`), the JAX backend's prepared call
(`backends.jax.fast_call`) and the default engine ("auto")."""

import time

import numpy as np
import pytest
from onnx import helper as h

import itergraph as ig
from itergraph.backends.jax.fast_call import FastCall
from onnx_builders import I64, B, F, body, const, model, run_ort, vi


def add_model():
    return model([h.make_node("Add", ["a", "b"], ["y"])],
                 [vi("a", F, [4]), vi("b", F, [4])], [vi("y", F, [4])])


def while_model(appends=True):
    """``x = x0; while x < limit: x = x + 1; ys.append(x)`` (`appends`: with ``ys``)."""
    ys = ["y"] if appends else []
    b = body([h.make_node("Add", ["x_in", "one"], ["x_out"]),
              h.make_node("Less", ["x_out", "limit"], ["c_out"]),
              h.make_node("Identity", ["x_out"], ["y"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [])],
             [vi("c_out", B, []), vi("x_out", F, []), *[vi(y, F, []) for y in ys]],
             [const("one", 1.0, np.float32)])
    return model([h.make_node("Less", ["x0", "limit"], ["c0"]),
                  h.make_node("Loop", ["", "c0", "x0"], ["x", *["ys"] * appends], body=b,
                              name="grow"),
                  h.make_node("Identity", ["x0"], ["x0_out"])],
                 [vi("x0", F, []), vi("limit", F, [])],
                 [vi("x", F, []), *[vi("ys", F, [None])] * appends, vi("x0_out", F, [])])


def shape_if_model():
    """``y = x * 3 if c else concat(x, x)``: branches of different shapes."""
    then_g = h.make_graph([h.make_node("Mul", ["x", "three"], ["t"])], "then", [],
                          [vi("t", F, [None])], [const("three", 3.0, np.float32)])
    else_g = h.make_graph([h.make_node("Concat", ["x", "x"], ["e"], axis=0)], "else", [],
                          [vi("e", F, [None])])
    return model([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g,
                              name="pick")],
                 [vi("x", F, [3]), vi("c", B, [])], [vi("y", F, [None])])


@pytest.fixture
def default_engine(monkeypatch):
    monkeypatch.delenv("ITERGRAPH_BACKEND", raising=False)


def test_the_default_engine_is_auto_and_picks_by_the_work(default_engine):
    loop = ig.load(while_model())
    assert loop.compile().backend == "jax"
    assert ig.load(add_model()).compile().backend == "numpy"  # dispatch would cost more
    got = loop.run({"x0": np.float32(0.5), "limit": np.float32(3)})
    want = run_ort(while_model(), {"x0": np.array(0.5, np.float32),
                                   "limit": np.array(3, np.float32)})
    np.testing.assert_allclose(got["ys"], want["ys"])
    assert loop._jax is not None and loop._jax.explain()  # ran on JAX


def test_the_environment_names_the_default_engine(monkeypatch):
    monkeypatch.setenv("ITERGRAPH_BACKEND", "jax")
    assert ig.load(add_model()).compile().backend == "jax"
    monkeypatch.setenv("ITERGRAPH_BACKEND", "tpu")
    with pytest.raises(ig.InputError, match="ITERGRAPH_BACKEND"):
        ig.load(add_model()).run({"a": np.ones(4, np.float32), "b": np.ones(4, np.float32)})


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_session_checks_every_new_signature(backend):
    sess = ig.load(add_model()).compile(backend)
    a = np.arange(4, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(sess.run({"a": a, "b": a})["y"], a + a)
    with pytest.raises(ig.InputError, match="element type float32"):
        sess.run({"a": a.astype(np.float64), "b": a})
    with pytest.raises(ig.InputError, match="dimension 0 must be 4"):
        sess.run({"a": np.zeros(5, np.float32), "b": a})
    with pytest.raises(ig.InputError, match="missing input 'b'"):
        sess.run({"a": a})
    with pytest.raises(ig.InputError, match="unknown input"):
        sess.run({"a": a, "b": a, "c": a})


def test_bad_options_are_refused_when_compiling():
    m = ig.load(add_model())
    with pytest.raises(ig.InputError, match="unknown backend"):
        m.compile("tpu")
    with pytest.raises(ig.InputError, match="max_iterations"):
        m.compile("numpy", max_iterations=-1)
    with pytest.raises(ig.InputError, match="max_iterations"):
        m.run({}, max_iterations=[1])


def test_jax_calls_one_program_directly_from_the_second_run():
    m = ig.load(while_model(appends=False))
    sess = m.compile("jax")
    feeds = {"x0": np.array(0.5, np.float32), "limit": np.array(3, np.float32)}
    want = run_ort(while_model(appends=False), feeds)
    firsts = [sess.run(feeds) for _ in range(3)]
    fast = list(m._jax._fast.values())
    assert len(fast) == 1 and isinstance(fast[0], FastCall)
    for got in firsts:
        for name in want:
            np.testing.assert_allclose(got[name], want[name])
    out = firsts[-1]
    assert out["x"].flags.writeable and out["x0_out"].flags.writeable
    out["x"][...] = -1  # outputs are the caller's: the next call is unaffected
    out["x0_out"][...] = -1
    assert feeds["x0"] == 0.5
    np.testing.assert_allclose(sess.run(feeds)["x"], want["x"])


def test_a_loop_driven_from_python_keeps_the_planned_path():
    m = ig.load(while_model())  # ys's length is known only at run time: `driver`
    feeds = {"x0": np.array(0.5, np.float32), "limit": np.array(3, np.float32)}
    for _ in range(3):
        np.testing.assert_allclose(m.run(feeds, backend="jax")["ys"], [1.5, 2.5, 3.5])
    assert list(m._jax._fast.values()) == [None]


def test_an_error_flagged_on_the_prepared_call_is_the_models_own():
    m = ig.load(while_model(appends=False))
    sess = m.compile("jax", max_iterations=5)
    ok = {"x0": np.array(0.5, np.float32), "limit": np.array(3, np.float32)}
    sess.run(ok)
    sess.run(ok)
    assert m._jax._fast
    with pytest.raises(ig.IterationLimitError):
        sess.run({"x0": np.array(0.5, np.float32), "limit": np.array(100, np.float32)})
    np.testing.assert_allclose(sess.run(ok)["x"], 3.5)


def test_an_if_on_a_small_input_is_one_program_per_condition_value():
    m = ig.load(shape_if_model())
    sess = m.compile("jax")
    x = np.array([1, -2, 3], np.float32)
    for _ in range(2):
        for c in (True, False):
            got = sess.run({"x": x, "c": np.array(c)})["y"]
            want = run_ort(shape_if_model(), {"x": x, "c": np.array(c)})["y"]
            np.testing.assert_array_equal(got, want)
    assert len(m._jax._fast) == 2
    assert all(isinstance(f, FastCall) for f in m._jax._fast.values())
    assert all(r.compiles for r in m._jax.explain())


def test_64_bit_feeds_take_the_prepared_call_in_64_bit_mode():
    g = model([h.make_node("Mul", ["a", "a"], ["y"])], [vi("a", I64, [3])], [vi("y", I64, [3])])
    m = ig.load(g)
    big = np.array([2**31 + 5, -7, 3], np.int64)
    for _ in range(3):
        y = m.run({"a": big}, backend="jax")["y"]
        assert y.dtype == np.int64
        np.testing.assert_array_equal(y, big * big)
    (fast,) = m._jax._fast.values()
    assert fast.x64


def _lstm_model():
    lstm = h.make_node("LSTM", ["X", "W", "R"], ["Y", "Yh"], hidden_size=3)
    rng = np.random.default_rng(0)
    return model([lstm], [vi("X", F, [None, 1, 2])],
                 [vi("Y", F, [None, 1, 1, 3]), vi("Yh", F, [1, 1, 3])],
                 [const("W", rng.standard_normal((1, 12, 2)), np.float32),
                  const("R", rng.standard_normal((1, 12, 3)), np.float32)])


def _slowed(fn, seconds):
    def slow(*a):
        time.sleep(seconds)
        return fn(*a)
    return slow


@pytest.mark.parametrize("slow", ["numpy", "jax"])
def test_auto_never_waits_for_a_compile_and_keeps_the_faster_engine(default_engine, slow):
    from itergraph.tiered import TRIALS, TieredRunner

    g = _lstm_model()
    sess = ig.load(g).compile()
    runner = sess._call
    assert sess.backend == "jax" and isinstance(runner, TieredRunner)
    if slow == "numpy":
        runner.numpy_run = _slowed(runner.numpy_run, 0.02)
    else:
        runner._jax = _slowed(runner._jax, 0.02)
    rng = np.random.default_rng(1)
    xs = {n: rng.standard_normal((n, 1, 2)).astype(np.float32) for n in (4, 7)}
    for n in (4, 7):
        for k in range(2 * TRIALS + 3):  # the warm-up, then the turns
            got = sess.run({"X": xs[n]})
            want = run_ort(g, {"X": xs[n]})
            for name in want:
                np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)
            if k == 0:  # answered on NumPy: the signature compiles behind the call
                assert runner.engine_for({"X": xs[n]}) is None
                runner.wait(60)
        assert runner.engine_for({"X": xs[n]}) == ("jax" if slow == "numpy" else "numpy")
    assert runner.compiled_in_background == 2


def test_auto_judges_both_engines_on_the_same_calls(default_engine):
    """Calls of one signature may differ in work (a trip count fed as a value): each judged
    call runs on both engines, so a slower engine cannot win by drawing the light calls."""
    from itergraph.tiered import TRIALS

    sess = ig.load(_lstm_model()).compile()
    runner = sess._call
    heavy = {"X": np.full((4, 1, 2), 0.5, np.float32)}
    light = {"X": np.full((4, 1, 2), -0.5, np.float32)}

    def work(fn, per_unit):
        def timed(feeds, *a):
            time.sleep(per_unit * (8 if feeds["X"].flat[0] > 0 else 1))
            return fn(feeds, *a)
        return timed

    runner.numpy_run = work(runner.numpy_run, 0.004)  # NumPy: twice JAX's time per unit
    runner._jax = work(runner._jax, 0.002)
    sess.run(heavy)
    runner.wait(60)
    for _ in range(TRIALS + 2):  # the JAX warm-up, then heavy and light calls in turn
        sess.run(heavy)
        sess.run(light)
    assert runner.engine_for(heavy) == "jax"


def test_auto_judges_after_fewer_calls_only_where_one_engine_is_clearly_faster():
    """`tiered._Verdict`: `CLEAR_TRIALS` calls judge when every call of one engine took
    under half the other's fastest (either way); otherwise the median of `TRIALS`."""
    from itergraph.tiered import CLEAR_TRIALS, TRIALS, _Verdict

    for fast, slow, want in [("jax", "numpy", "jax"), ("numpy", "jax", "numpy")]:
        v = _Verdict()
        for k in range(CLEAR_TRIALS):
            assert v.choice is None
            v.record(**{fast: 0.001 * (1 + k % 2), slow: 0.0041})
        assert v.choice == want
    close = _Verdict()  # JAX faster, not twice as fast on every call: the full count
    for k in range(TRIALS):
        assert close.choice is None
        close.record(jax=0.003 if k else 0.0015, numpy=0.005)
    assert close.choice == "jax"


def test_a_jax_session_calls_a_checked_signature_straight_to_its_prepared_call():
    """`Session.run`: once a signature's run is one program, the session keeps its prepared
    call by the feed check's key; new values of those shapes and a second signature are
    computed afresh, and feeds the check would convert still go through it."""
    sess = ig.load(add_model()).compile("jax")
    a = np.arange(4, dtype=np.float32)
    for k in range(3):
        np.testing.assert_array_equal(sess.run({"a": a + k, "b": a})["y"], 2 * a + k)
    (key, fast), = sess._direct.items()
    assert isinstance(fast, FastCall) and key == (("a", a.dtype, (4,)), ("b", a.dtype, (4,)))
    for _ in range(2):
        np.testing.assert_array_equal(sess.run({"b": a, "a": a})["y"], 2 * a)  # another order
    assert len(sess._direct) == 2
    np.testing.assert_array_equal(sess.run({"a": [0, 1, 2, 3], "b": a})["y"], 2 * a)
    with pytest.raises(ig.InputError):
        sess.run({"a": a})


def test_auto_calls_a_judged_signature_straight_on_the_engine_it_picked(default_engine):
    """`Session.run` on "auto": once a signature is judged, its calls go to the picked
    engine's call (`TieredRunner.direct`), which `Session.engine_for` names; another
    signature is still answered (on NumPy) while it is not judged."""
    g = _lstm_model()
    sess = ig.load(g).compile()
    x = np.random.default_rng(3).standard_normal((5, 1, 2)).astype(np.float32)
    for _ in range(40):
        sess.run({"X": x})
        sess._call.wait(60)
        if sess._direct:
            break
    (key, call), = sess._direct.items()
    picked = sess.engine_for({"X": x})
    assert picked in ("numpy", "jax") and key == (("X", x.dtype, x.shape),)
    assert (call is sess._call.numpy_run) == (picked == "numpy")
    for feeds in ({"X": x}, {"X": x[:3]}):
        got = sess.run(feeds)
        for name, want in run_ort(g, feeds).items():
            np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-6)
    assert sess.engine_for({"X": x[:3]}) is None
