"""passes.cells.mask: loops whose states a per-step mask selects (Keras masking, as tf2onnx and
OpenVINO's TensorFlow frontend write it) are fused with the mask, and compute what ONNX
Runtime computes on the original loop, on both backends; selects that are not Keras masking
leave the loop alone."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

import itergraph as ig
from cell_spellings import build
from itergraph.passes.cells import fuse_cells
from onnx_builders import run_ort
from passutil import load, loops, run, transformed

MASKED = {
    "lstm_where_scan": dict(cell="lstm", mask="where"),
    "lstm_cast_output_gather": dict(cell="lstm", mask="cast", mask_output=True,
                                    loop="loop_gather", product="gemm", order="ifco"),
    "lstm_where_output_reverse": dict(cell="lstm", mask="where", mask_output=True,
                                      loop="scan_reverse"),
    "gru_cast_output": dict(cell="gru", mask="cast", mask_output=True, lbr=0),
    "gru_where_gather": dict(cell="gru", mask="where", loop="loop_gather", update="torch"),
    "rnn_cast": dict(cell="rnn", mask="cast", clip=0.6),
    "rnn_where_output_batch1": dict(cell="rnn", mask="where", mask_output=True, B=1, T=7),
    "lstm_peephole_cast_batch5": dict(cell="lstm", mask="cast", peephole=True, B=5, T=6),
    "lstm_cast_fill_gather": dict(cell="lstm", mask="cast", mask_output="fill",
                                  loop="loop_gather"),
    "gru_where_fill_reverse": dict(cell="gru", mask="where", mask_output="fill",
                                   loop="scan_reverse"),
}


def _close(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("name", list(MASKED))
def test_masked_cell_is_fused_and_matches_onnxruntime(name):
    m, feeds = build(**MASKED[name])
    assert not feeds["MK"].all() and feeds["MK"].any()
    want = run_ort(m, feeds)
    g, count = transformed(load(m), fuse_cells)
    assert count == 1 and not loops(g)
    node = next(n for n in g.nodes if n.op_type == "RecurrentSequence")
    assert node.inputs[9] is not None  # the mask
    assert (node.inputs[10] is not None) == bool(MASKED[name].get("mask_output", False))
    assert node.attrs.get("mask_output", "hold") == (
        "fill" if MASKED[name].get("mask_output") == "fill" else "hold")
    _close(run(g, feeds), want)
    model = ig.load(m)
    _close(model.run(feeds), want)
    _close(model.run(feeds, backend="jax"), want)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("output", [True, "fill"])
def test_all_true_and_all_false_masks(backend, output):
    """A mask that holds everywhere is the plain cell; one that never holds keeps the
    initial states and outputs the initial output (or the fill)."""
    m, feeds = build(cell="lstm", mask="cast", mask_output=output)
    model = ig.load(m)
    for value in (True, False):
        f = {**feeds, "MK": np.full_like(feeds["MK"], value)}
        _close(model.run(f, backend=backend), run_ort(m, f))


def _mutate(m, fn):
    """`m` with `fn` applied to the Scan body's node list."""
    scan = next(n for n in m.graph.node if n.op_type == "Scan")
    body = next(a for a in scan.attribute if a.name == "body").g
    fn(body.node)
    return m


def test_a_state_selected_by_another_mask_value_stays_a_loop():
    """Only h selected by the mask, c selected by its negation: no Keras masking."""
    m, feeds = build(cell="lstm", mask="where")

    def flip(nodes):
        sel = next(n for n in nodes if n.op_type == "Where" and n.output[0] == "sel_c")
        nodes.insert(0, h.make_node("Not", ["m_t"], ["m_not"]))
        sel.input[0] = "m_not"

    m = _mutate(m, flip)
    want = run_ort(m, feeds)
    g, count = transformed(load(m), fuse_cells)
    assert count == 0 and loops(g)
    _close(ig.load(m).run(feeds), want)


def test_a_mask_read_elsewhere_stays_a_loop():
    """The mask also scales the step input: the cell is not run on x as it is."""
    m, feeds = build(cell="rnn", mask="where", I=5)

    def scale(nodes):
        nodes.insert(0, h.make_node("Cast", ["m_t"], ["m_f"], to=1))
        nodes.insert(1, h.make_node("Mul", ["x_t", "m_f"], ["x_m"]))
        for n in nodes[2:]:
            for k, v in enumerate(n.input):
                if v == "x_t":
                    n.input[k] = "x_m"

    m = _mutate(m, scale)
    want = run_ort(m, feeds)
    g, count = transformed(load(m), fuse_cells)
    assert count == 0 and loops(g)
    _close(ig.load(m).run(feeds), want)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_fewer_steps_than_the_mask_has(backend):
    """A trip count below the sequence length: the mask is read for those steps only."""
    m, feeds = build(cell="gru", mask="where", mask_output=True, loop="loop_gather", T=6)
    feeds = {**feeds, "M": np.array(4, np.int64)}
    _close(ig.load(m).run(feeds, backend=backend), run_ort(m, feeds))


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("mask,o0,says", [
    (np.ones((4, 2), np.float32), (2, 5), "expected booleans [4, batch]"),
    (np.ones((5, 2), bool), (2, 5), "expected booleans [4, batch]"),
    (np.ones((4, 3), bool), (2, 5), "do not broadcast"),
    (np.zeros((4, 2), bool), (3, 7), "broadcast"),
])
def test_a_bad_mask_or_initial_output_is_an_error_naming_the_node(backend, mask, o0, says):
    """A ``RecurrentSequence`` written by hand (its mask and initial output as inputs)."""
    from onnx import TensorProto, numpy_helper

    rng = np.random.default_rng(0)
    node = h.make_node("RecurrentSequence", ["X", "W", "R", "", "", "H0", "", "", "", "M", "O0"],
                       ["Y", "Yh"], domain="itergraph", cell="RNN", hidden_size=5, name="seq")
    code = TensorProto.BOOL if mask.dtype == bool else TensorProto.FLOAT
    g = h.make_graph([node], "g", [h.make_tensor_value_info("X", 1, [4, 2, 3]),
                                   h.make_tensor_value_info("H0", 1, [2, 5]),
                                   h.make_tensor_value_info("M", code, None),
                                   h.make_tensor_value_info("O0", 1, None)],
                     [h.make_tensor_value_info("Y", 1, None),
                      h.make_tensor_value_info("Yh", 1, None)],
                     [numpy_helper.from_array(rng.standard_normal((5, 3)).astype(np.float32), "W"),
                      numpy_helper.from_array(rng.standard_normal((5, 5)).astype(np.float32), "R")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("itergraph", 1)])
    feeds = {"X": rng.standard_normal((4, 2, 3)).astype(np.float32),
             "H0": np.zeros((2, 5), np.float32), "M": mask, "O0": np.zeros(o0, np.float32)}
    with pytest.raises(ig.ExecutionError, match="seq") as e:
        ig.load(m).run(feeds, backend=backend)
    assert says in str(e.value)
