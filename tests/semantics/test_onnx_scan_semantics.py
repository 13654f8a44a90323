"""ONNX Scan semantics the public node suite does not cover, against ORT and plain Python."""

import numpy as np
import pytest
from onnx import helper as h

from itergraph.errors import ExecutionError, LeniencyWarning
from onnx_builders import I64, F, assert_same, body, model, run_ig, run_ort, vi


def scan_sum_model(in_axes, in_dirs, out_axes, out_dirs, opset=21, twice=False):
    """State s += x_t (elementwise); outputs: scanned copy of x_t, and running s."""
    nin = 2 if twice else 1
    ins = ["x_t", "x2_t"][:nin]
    nodes = [h.make_node("Add", ["s_in", "x_t"], ["s_a"])]
    if twice:
        nodes.append(h.make_node("Sub", ["s_a", "x2_t"], ["s_out"]))
    else:
        nodes.append(h.make_node("Identity", ["s_a"], ["s_out"]))
    nodes += [h.make_node("Identity", ["x_t"], ["o1"]), h.make_node("Identity", ["s_out"], ["o2"])]
    b = body(nodes, [vi("s_in", F, [None]), *[vi(n, F, [None]) for n in ins]],
             [vi("s_out", F, [None]), vi("o1", F, [None]), vi("o2", F, [None])])
    attrs = dict(num_scan_inputs=nin, scan_input_axes=in_axes, scan_input_directions=in_dirs,
                 scan_output_axes=out_axes, scan_output_directions=out_dirs)
    scan_ins = ["s0", "X"] + (["X"] if twice else [])
    return model([h.make_node("Scan", scan_ins, ["s", "Y1", "Y2"], body=b, name="scan", **attrs)],
                 [vi("s0", F, [None]), vi("X", F, [None, None])],
                 [vi("s", F, [None]), vi("Y1", F, [None, None]), vi("Y2", F, [None, None])],
                 opset=opset)


def python_scan(x, in_axis, in_dir, out_axes, out_dirs, s0, x2_dir=None):
    xm = np.moveaxis(x, in_axis, 0)
    seq = xm[::-1] if in_dir else xm
    seq2 = (xm[::-1] if x2_dir else xm) if x2_dir is not None else None
    s, o1, o2 = s0.copy(), [], []
    for t in range(len(seq)):
        s = s + seq[t] - (seq2[t] if seq2 is not None else 0)
        o1.append(seq[t])
        o2.append(s)
    outs = []
    for o, ax, d in ((o1, out_axes[0], out_dirs[0]), (o2, out_axes[1], out_dirs[1])):
        st = np.stack(o[::-1] if d else o)
        outs.append(np.moveaxis(st, 0, ax if ax >= 0 else ax + st.ndim))
    return s, outs[0], outs[1]


@pytest.mark.parametrize("in_axis,in_dir,out_axes,out_dirs", [
    (0, 0, [0, 0], [0, 0]),
    (1, 0, [1, 0], [0, 0]),
    (0, 1, [0, 1], [1, 0]),
    (1, 1, [1, 1], [0, 1]),
    (-1, 0, [-1, 0], [0, 0]),   # negative axes: Scan-11+
    (-2, 1, [-2, -1], [1, 1]),
])
def test_axes_and_directions(in_axis, in_dir, out_axes, out_dirs):
    m = scan_sum_model([in_axis], [in_dir], out_axes, out_dirs)
    x = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5
    n_other = x.shape[1 - (in_axis % 2)]
    feeds = {"s0": np.zeros(n_other, np.float32), "X": x}
    got = run_ig(m, feeds)
    assert_same(got, run_ort(m, feeds))
    s, y1, y2 = python_scan(x, in_axis, in_dir, out_axes, out_dirs, feeds["s0"])
    np.testing.assert_allclose(got["s"], s)
    np.testing.assert_allclose(got["Y1"], y1)
    np.testing.assert_allclose(got["Y2"], y2)


def test_same_input_scanned_twice_in_two_directions():
    m = scan_sum_model([0, 0], [0, 1], [0, 0], [0, 0], twice=True)
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    feeds = {"s0": np.zeros(3, np.float32), "X": x}
    got = run_ig(m, feeds)
    assert_same(got, run_ort(m, feeds))
    s, _, y2 = python_scan(x, 0, 0, [0, 0], [0, 0], feeds["s0"], x2_dir=1)
    np.testing.assert_allclose(got["s"], s)
    np.testing.assert_allclose(got["Y2"], y2)


@pytest.mark.parametrize("opset", [9, 11, 16, 19, 21, 23, 24, 25])
def test_every_scan_version(opset):
    m = scan_sum_model([0], [0], [0, 0], [0, 0], opset=opset)
    x = np.random.default_rng(opset).standard_normal((6, 2)).astype(np.float32)
    feeds = {"s0": np.zeros(2, np.float32), "X": x}
    got = run_ig(m, feeds)
    assert_same(got, run_ort(m, feeds))
    s, y1, y2 = python_scan(x, 0, 0, [0, 0], [0, 0], feeds["s0"])
    np.testing.assert_allclose(got["Y2"], y2, rtol=1e-6)


def test_zero_length_scan():
    """ONNX Runtime refuses an empty scan input; itergraph runs no iteration and warns."""
    m = scan_sum_model([0], [0], [0, 0], [0, 0])
    feeds = {"s0": np.ones(2, np.float32), "X": np.zeros((0, 2), np.float32)}
    with pytest.warns(LeniencyWarning, match="'scan'.*sequence length zero"):
        got = run_ig(m, feeds)
    np.testing.assert_array_equal(got["s"], feeds["s0"])
    assert got["Y1"].shape[0] == 0 and got["Y2"].shape[0] == 0


def two_input_scan_model():
    """s += x_t - z_t over two scan inputs whose lengths are not known when loading."""
    b = body([h.make_node("Sub", ["x_t", "z_t"], ["d"]),
              h.make_node("Add", ["s_in", "d"], ["s_out"]),
              h.make_node("Identity", ["s_out"], ["y"])],
             [vi("s_in", F, [2]), vi("x_t", F, [2]), vi("z_t", F, [2])],
             [vi("s_out", F, [2]), vi("y", F, [2])])
    return model([h.make_node("Scan", ["s0", "X", "Z"], ["s", "Y"], body=b, name="scan",
                              num_scan_inputs=2, scan_input_directions=[0, 1])],
                 [vi("s0", F, [2]), vi("X", F, [None, 2]), vi("Z", F, [None, 2])],
                 [vi("s", F, [2]), vi("Y", F, [None, 2])], opset=21)


def test_scan_inputs_of_different_lengths_are_refused_when_it_runs():
    """ONNX Runtime: "Scan inputs have inconsistent sequence lengths"; not the shortest."""
    m = two_input_scan_model()
    x, z = np.ones((3, 2), np.float32), np.ones((5, 2), np.float32)
    with pytest.raises(ExecutionError, match=r"'scan'.*different sequence lengths.*'X'\) has 3"
                                             r".*'Z'\) has 5"):
        run_ig(m, {"s0": np.zeros(2, np.float32), "X": x, "Z": z})
    feeds = {"s0": np.zeros(2, np.float32), "X": x, "Z": 2 * z[:3]}
    assert_same(run_ig(m, feeds), run_ort(m, feeds))


def test_scan8_batch_sizes_that_differ_are_refused_when_it_runs():
    """ONNX Runtime: "Scan inputs have inconsistent batch size"."""
    b = body([h.make_node("Add", ["s_in", "x_t"], ["s_out"]),
              h.make_node("Identity", ["s_out"], ["y"])],
             [vi("s_in", F, [2]), vi("x_t", F, [2])], [vi("s_out", F, [2]), vi("y", F, [2])])
    m = model([h.make_node("Scan", ["", "s0", "X"], ["s", "Y"], body=b, name="s8",
                           num_scan_inputs=1)],
              [vi("s0", F, [None, 2]), vi("X", F, [None, 4, 2])],
              [vi("s", F, [None, 2]), vi("Y", F, [None, 4, 2])], opset=8)
    feeds = {"s0": np.zeros((2, 2), np.float32), "X": np.ones((3, 4, 2), np.float32)}
    with pytest.raises(ExecutionError, match="'s8'.*'s0'\\) has 2.*'X'\\) has 3"):
        run_ig(m, feeds)


def scan8_model():
    """Scan-8, batch axis 0: s += x_t; outputs the running s per step."""
    b = body([h.make_node("Add", ["s_in", "x_t"], ["s_out"]),
              h.make_node("Identity", ["s_out"], ["y"])],
             [vi("s_in", F, [2]), vi("x_t", F, [2])], [vi("s_out", F, [2]), vi("y", F, [2])])
    return model([h.make_node("Scan", ["lens", "s0", "X"], ["s", "Y"], body=b,
                              num_scan_inputs=1, directions=[0])],
                 [vi("lens", I64, [3]), vi("s0", F, [3, 2]), vi("X", F, [3, 5, 2])],
                 [vi("s", F, [3, 2]), vi("Y", F, [3, 5, 2])], opset=8)


@pytest.mark.parametrize("lens", [[5, 2, 1], [5, 0, 3]])
def test_scan8_batching_with_sequence_lens(lens):
    m = scan8_model()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 2)).astype(np.float32)
    lens = np.array(lens)
    s0 = rng.standard_normal((3, 2)).astype(np.float32)
    feeds = {"lens": lens, "s0": s0, "X": x}
    got = run_ig(m, feeds)
    want_s, want_y = s0.copy(), np.zeros_like(x)
    for bi in range(3):
        for t in range(lens[bi]):
            want_s[bi] = want_s[bi] + x[bi, t]
            want_y[bi, t] = want_s[bi]
    np.testing.assert_allclose(got["s"], want_s, rtol=1e-6)
    np.testing.assert_allclose(got["Y"], want_y, rtol=1e-6)  # past a row's length: zeros
    if lens.min() > 0:  # ONNX Runtime rejects rows of length 0 ("Invalid entries in sequence_lens")
        assert_same(got, run_ort(m, feeds))
