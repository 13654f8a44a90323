"""``itergraph profile``: calls per node equal the steps the plain loops take (a node nested
two deep runs outer x inner steps times), times are positive, and the table reads right."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from loop_models import nested, nested_feeds

from itergraph import cli
from itergraph.inspect.profile import profile

N, M = 6, 4


def plain_counts(n: int, m: int) -> dict[str, int]:
    """How often each body node runs, counted in the plain Python loops of `nested`."""
    c: dict[str, int] = {}

    def ran(name):
        c[name] = c.get(name, 0) + 1

    for i in range(n):
        for name in ("outer_less", "choose", "inner", "outer_add", "outer_cond"):
            ran(name)
        ran("then_neg" if i < 2 else "else_abs")
        for _ in range(m):
            for name in ("inner_add", "inner_tanh", "inner_cond"):
                ran(name)
    for _ in range(n):
        ran("scan_add")
        ran("scan_cond")
    c["outer"] = c["scan"] = 1
    return c


def test_numpy_counts_are_trip_counts_and_times_positive():
    p = profile(nested(), nested_feeds(N, M))
    want = plain_counts(N, M)
    got = {s.name: s.calls for s in p.nodes}
    # Identity nodes are aliases in a plan, not calls
    assert got == {k: v for k, v in want.items() if not k.endswith("_cond")}
    assert p.node("outer/inner/inner_tanh").calls == N * M
    assert p.loops[("outer",)] == {"runs": 1, "steps": N, "seconds": pytest.approx(
        p.node("outer").seconds)}
    assert p.loops[("outer", "inner")]["runs"] == N
    assert p.loops[("outer", "inner")]["steps"] == N * M
    assert p.loops[("scan",)]["steps"] == N
    assert all(s.seconds > 0 for s in p.nodes) and p.seconds > 0
    # a loop's time holds its body's
    inner = p.node("outer/inner").seconds
    assert inner > p.node("inner_tanh").seconds + p.node("inner_add").seconds
    assert p.node("outer").seconds > inner


def test_jax_times_each_loop_alone_and_counts_like_numpy():
    p = profile(nested(), nested_feeds(N, M), backend="jax", repeat=2)
    assert p.backend == "jax" and p.seconds > 0
    assert all(p.loops[k]["seconds"] > 0 for k in [("outer",), ("scan",), ("outer", "inner")])
    assert p.loops[("outer", "inner")]["runs"] == N
    assert p.node("outer/inner/inner_tanh").calls == N * M
    assert all(s.seconds < 0 for s in p.nodes)  # not measured, and the table says so
    assert any("XLA fuses" in n for n in p.notes)
    assert any("dispatch of a compiled graph" in n for n in p.notes)


def test_cli_table(tmp_path, capsys):
    onnx.save(nested(), str(tmp_path / "m.onnx"))
    args = []
    for k, v in nested_feeds(N, M).items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--input", f"{k}={tmp_path / f'{k}.npy'}"]
    assert cli.main(["profile", str(tmp_path / "m.onnx"), *args]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"profile of {tmp_path / 'm.onnx'} on numpy: ")
    assert out[2].split() == ["loop", "runs", "steps", "total", "ms", "ms/run", "us/step"]
    loops = {ln.split()[0]: ln.split() for ln in out[3:6]}
    assert loops["outer/inner"][1:3] == [str(N), str(N * M)]
    head = out.index(next(ln for ln in out if ln.startswith("node ")))
    assert out[head].split() == ["node", "op", "calls", "total", "ms", "us/call", "%"]
    rows = {ln.split()[0]: ln.split() for ln in out[head + 1:] if ln.strip()}
    assert rows["outer/inner/inner_tanh"][1:3] == ["Tanh", str(N * M)]
    assert float(rows["outer/inner/inner_tanh"][3]) > 0
    total_ms = float(out[0].split(": ")[1].split()[0])
    assert float(rows["outer"][3]) <= total_ms
    assert cli.main(["profile", str(tmp_path / "m.onnx"), "--input", "N=nope.npy"]) == 2


def test_numpy_profile_warms_up_repeats_and_names_unnamed_nodes():
    """The warm-up is not counted, the repeats give per-run figures (counts as for one run),
    the run time is their median with the spread shown, and unnamed nodes are numbered."""
    p = profile(nested(), nested_feeds(N, M), repeat=4)
    assert len(p.runs) == 4 and p.seconds == pytest.approx(float(np.median(p.runs)))
    assert p.node("outer/inner/inner_tanh").calls == N * M
    assert "median of 4 runs after a warm-up" in p.text()
    g = onnx.helper
    m = g.make_model(g.make_graph(
        [g.make_node("Relu", ["x"], ["a"]), g.make_node("Relu", ["a"], ["b"]),
         g.make_node("Neg", ["b"], ["y"])], "g",
        [g.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3])],
        [g.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [3])]))
    names = sorted(s.name for s in profile(m, {"x": np.ones(3, np.float32)}).nodes)
    assert names == ["<Neg#1>", "<Relu#1>", "<Relu#2>"]
