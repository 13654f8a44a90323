"""ONNX Scan of every version (8 included) -> canonical Loop -> ONNX, with ORT as the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnxfe_util import assert_same, check_numpy, model, numpy_backend, ort_run, roundtrip, vi

from itergraph.errors import ExecutionError
from itergraph.frontends.onnx import read, write
from itergraph.ir import Carried, Concat, Last, Loop, Sliced

# Scan version -> a model opset under which that version is the current Scan
SCAN_VERSIONS = {9: 9, 11: 11, 16: 16, 19: 19, 21: 21, 23: 23, 24: 24, 25: 25}


def scan_model(opset: int, negative: bool = False, out_dirs=(1, 0)):
    """State s (+= x_t + y_t), x scanned forward, the same X scanned backward as y,
    Z ([3, T]) scanned on its axis 1; outputs: s per step (axis 0) and 2*z_t (axis 1)."""
    body = h.make_graph(
        [
            h.make_node("Add", ["x", "y"], ["xy"]),
            h.make_node("Add", ["s", "xy"], ["s_out"]),
            h.make_node("Identity", ["s_out"], ["o1"]),
            h.make_node("Add", ["z", "z"], ["o2"]),
        ],
        "body",
        [vi("s", TP.FLOAT, [2]), vi("x", TP.FLOAT, [2]), vi("y", TP.FLOAT, [2]),
         vi("z", TP.FLOAT, [3])],
        [vi("s_out", TP.FLOAT, [2]), vi("o1", TP.FLOAT, [2]), vi("o2", TP.FLOAT, [3])],
    )
    ax = -1 if negative else 1
    node = h.make_node("Scan", ["s0", "X", "X", "Z"], ["sf", "O1", "O2"], body=body,
                       num_scan_inputs=3, scan_input_axes=[0, 0, ax],
                       scan_input_directions=[0, 1, 0], scan_output_axes=[0, ax],
                       scan_output_directions=list(out_dirs), name="the_scan")
    return model([node], [vi("s0", TP.FLOAT, [2]), vi("X", TP.FLOAT, ["T", 2]),
                          vi("Z", TP.FLOAT, [3, "T"])],
                 [vi("sf", TP.FLOAT, [2]), vi("O1", TP.FLOAT, ["T", 2]),
                  vi("O2", TP.FLOAT, [3, "T"])], opset)


def scan_feeds(t: int):
    rng = np.random.default_rng(t)
    return {"s0": rng.standard_normal(2).astype(np.float32),
            "X": rng.standard_normal((t, 2)).astype(np.float32),
            "Z": rng.standard_normal((3, t)).astype(np.float32)}


@pytest.mark.parametrize("version", sorted(SCAN_VERSIONS))
def test_scan_versions_roundtrip(version):
    opset = SCAN_VERSIONS[version]
    fs = [scan_feeds(t) for t in (4, 1)]  # T=0 crashes ONNX Runtime (SIGFPE)
    variants = [dict(), dict(out_dirs=(0, 1))] + ([dict(negative=True)] if version >= 11 else [])
    for kw in variants:
        mod = scan_model(opset, **kw)
        g, m2 = roundtrip(mod, fs)
        check_numpy(g, mod, fs)
        assert [n.op_type for n in m2.graph.node] == ["Scan"]
        loop = g.nodes[0]
        assert isinstance(loop, Loop) and loop.origin == "onnx.Scan" and loop.name == "the_scan"
        assert loop.origin_attrs["version"] == version


def test_scan_structure():
    g = read(scan_model(11, negative=True))
    (loop,) = g.nodes
    body = loop.body
    s0, X, Z = g.inputs
    c, x, y, z = loop.input_ports
    assert isinstance(c, Carried) and (c.value, c.param, c.result) == (s0, body.inputs[0],
                                                                        body.outputs[0])
    assert all(isinstance(p, Sliced) and not p.keep_axis and p.part_size == 1 for p in (x, y, z))
    assert x.value is X and y.value is X and x.param is not y.param  # same value, two ports
    assert (x.axis, x.stride) == (0, 1) and (y.axis, y.stride) == (0, -1)
    assert (z.axis, z.stride) == (1, 1)  # -1 normalized with the known rank 2
    last, o1, o2 = loop.output_ports
    assert isinstance(last, Last) and last.result is body.outputs[0]
    assert isinstance(o1, Concat) and o1.new_axis and (o1.axis, o1.reverse) == (0, True)
    assert isinstance(o2, Concat) and (o2.axis, o2.reverse) == (1, False)  # -1 -> 1 (rank 2)
    assert loop.trip_count is None and loop.iteration_param is None
    assert loop.equal_slices and not loop.strict_slices  # one sequence: lengths must agree


def test_scan_negative_axis_unknown_rank_kept():
    body = h.make_graph([h.make_node("Identity", ["x"], ["o"])], "body", [vi("x")], [vi("o")])
    node = h.make_node("Scan", ["X"], ["O"], body=body, num_scan_inputs=1,
                       scan_input_axes=[-1], scan_output_axes=[-1])
    g = read(model([node], [vi("X")], [vi("O")], 11))
    (p,) = g.nodes[0].input_ports
    assert p.axis == -1 and g.nodes[0].output_ports[0].axis == -1


# Scan 8 --------------------------------------------------------------------------------


def scan8_model(with_lens: bool, dirs=(0, 1)):
    """Batched Scan-8: state s[b] += x_t + y_t (X forward and backward); output s per step."""
    body = h.make_graph(
        [h.make_node("Add", ["x", "y"], ["xy"]), h.make_node("Add", ["s", "xy"], ["s_out"]),
         h.make_node("Identity", ["s_out"], ["o"]), h.make_node("Sub", ["x", "y"], ["d"])],
        "body",
        [vi("s", TP.FLOAT, [2]), vi("x", TP.FLOAT, [2]), vi("y", TP.FLOAT, [2])],
        [vi("s_out", TP.FLOAT, [2]), vi("o", TP.FLOAT, [2]), vi("d", TP.FLOAT, [2])],
    )
    node = h.make_node("Scan", ["lens" if with_lens else "", "s0", "X", "X"], ["sf", "O", "D"],
                       body=body, num_scan_inputs=2, directions=list(dirs), name="s8")
    ins = [vi("lens", TP.INT64, ["B"])] if with_lens else []
    ins += [vi("s0", TP.FLOAT, ["B", 2]), vi("X", TP.FLOAT, ["B", "T", 2])]
    return model([node], ins, [vi("sf", TP.FLOAT, ["B", 2]), vi("O", TP.FLOAT, ["B", "T", 2]),
                               vi("D", TP.FLOAT, ["B", "T", 2])], 8)


def scan8_feeds(lens=None, t=4):
    rng = np.random.default_rng(len(lens or ()) + t)
    b = len(lens) if lens is not None else 3
    f = {"s0": rng.standard_normal((b, 2)).astype(np.float32),
         "X": rng.standard_normal((b, t, 2)).astype(np.float32)}
    if lens is not None:
        f["lens"] = np.array(lens, np.int64)
    return f


def scan8_reference(f, dirs):
    """Plain NumPy Scan-8: per batch row, run to its length; outputs past it are zero."""
    s0, X = f["s0"], f["X"]
    b, t = X.shape[:2]
    lens = f.get("lens", np.full(b, t))
    sf, O, D = s0.copy(), np.zeros_like(X), np.zeros_like(X)
    for r in range(b):
        n = int(lens[r])
        valid = X[r, :n]
        xs = valid[::-1] if dirs[0] else valid
        ys = valid[::-1] if dirs[1] else valid
        s = s0[r]
        for k in range(n):
            s = s + xs[k] + ys[k]
            O[r, k], D[r, k] = s, xs[k] - ys[k]
        sf[r] = s
    return [sf, O, D]


@pytest.mark.parametrize("dirs", [(0, 1), (1, 0), (0, 0)])
def test_scan8_sequence_lens(dirs):
    mod = scan8_model(True, dirs)
    fs = [scan8_feeds([4, 2, 1, 3]), scan8_feeds([1])]
    g, m2 = roundtrip(mod, fs)  # ORT pads with zeros too
    # ORT's Scan-8 refuses zero lengths; the written model (ORT Loop/Scan 9+) accepts them
    for f in fs + [scan8_feeds([0, 4, 2]), scan8_feeds([0, 0], t=0)]:
        assert_same(ort_run(m2, f), scan8_reference(f, dirs))
    check_numpy(g, mod, fs)


def test_scan8_without_sequence_lens():
    mod = scan8_model(False)
    fs = [scan8_feeds(None), scan8_feeds(None, t=1)]
    g, m2 = roundtrip(mod, fs)
    for f in fs:
        assert_same(ort_run(m2, f), scan8_reference(f, (0, 1)))
    check_numpy(g, mod, fs)


def test_scan8_structure():
    g = read(scan8_model(True))
    (outer,) = g.nodes
    lens, s0, X = g.inputs
    assert isinstance(outer, Loop) and outer.origin == "onnx.Scan" and outer.name == "s8"
    assert [(p.value, p.axis, p.keep_axis) for p in outer.input_ports] == [
        (s0, 0, False), (X, 0, False), (X, 0, False), (lens, 0, False)]
    assert all(isinstance(o, Concat) and o.axis == 0 and o.new_axis for o in outer.output_ports)
    (inner,) = [n for n in outer.body.nodes if isinstance(n, Loop)]
    assert inner.trip_count is outer.input_ports[3].param
    x, y = inner.sliced
    assert x.stride == 1 and y.stride == -1
    assert y.value.producer.op_type == "Slice"  # the reversed row is cut to its length first
    time_len = inner.output_ports[1].length
    assert time_len is not None and time_len.producer.op_type == "Gather"
    assert all(o.length is time_len for o in inner.output_ports if isinstance(o, Concat))
    # batch sizes must agree; the time loop runs a time axis of zero (as ONNX Runtime does)
    assert outer.equal_slices and not inner.equal_slices


def test_scan8_sequence_lens_above_time_axis_is_a_run_time_error():
    g = read(scan8_model(True))
    inner = next(n for n in g.nodes[0].body.nodes if isinstance(n, Loop))
    assert inner.strict_slices and inner.negative_trip_count == "zero"
    run_graph = numpy_backend()
    assert run_graph is not None
    with pytest.raises(ExecutionError):
        run_graph(g, scan8_feeds([2, 5]))  # T = 4


def test_scan_with_unknown_ranks_is_written_as_loop():
    """Without the body's shapes ONNX Runtime's Scan cannot run: the writer uses Loop."""
    body = h.make_graph([h.make_node("Add", ["s", "x"], ["s2"]),
                         h.make_node("Neg", ["x"], ["o"])], "body",
                        [vi("s"), vi("x")], [vi("s2"), vi("o")])
    node = h.make_node("Scan", ["s0", "X"], ["sf", "O"], body=body, num_scan_inputs=1,
                       scan_input_directions=[1])
    mod = model([node], [vi("s0"), vi("X")], [vi("sf"), vi("O")], 11)
    fs = [{"s0": np.zeros(2, np.float32), "X": np.arange(6, dtype=np.float32).reshape(3, 2)}]
    g = read(mod)
    m2 = write(g)
    assert [n.op_type for n in m2.graph.node].count("Loop") == 1
    for f in fs:
        s, outs = f["s0"], []
        for row in f["X"][::-1]:
            s = s + row
            outs.append(-row)
        want = [s, np.stack(outs)]
        assert_same(ort_run(m2, f), want)  # (ORT refuses the original Scan itself)
        run_graph = numpy_backend()
        assert_same(list(run_graph(g, f).values()), want)
