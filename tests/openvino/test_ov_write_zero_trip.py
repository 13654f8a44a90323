"""The OpenVINO IR writer on loops known to run no iteration (a trip count of 0, a constant
false initial condition, rows of an input of static length 0): written as their initial
values and empty outputs, since OpenVINO's CPU plugin evaluates such a loop while compiling
and refuses it or dies of a floating-point exception. ONNX Runtime on the original file is
the oracle."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from onnx import helper as h

from onnx_builders import I64, B, F, body, const, model, vi
from passutil import assert_like_ort_everywhere


def _loop(trip: int = 0, init_const: bool = True, dims=(3,), first=None):
    """acc += X, y = acc * acc scanned out, `trip` times (an initializer); `first`: a
    constant initial condition (with an unbounded trip count)."""
    nodes = [h.make_node("Add", ["acc_in", "X"], ["acc_out"]),
             h.make_node("Mul", ["acc_out", "acc_out"], ["y"]),
             h.make_node("Identity", ["c_in"], ["c_out"])]
    b = body(nodes, [vi("i", I64, []), vi("c_in", B, []), vi("acc_in", F, list(dims))],
             [vi("c_out", B, []), vi("acc_out", F, list(dims)), vi("y", F, list(dims))])
    inits = [const("M", np.int64(2**63 - 1 if first is not None else trip))]
    if first is not None:
        inits.append(const("first", np.bool_(first)))
    if init_const:
        inits.append(const("acc0", np.ones(dims, np.float32)))
    ins = [vi("X", F, list(dims))] + ([] if init_const else [vi("acc0", F, list(dims))])
    loop = h.make_node("Loop", ["M", "first" if first is not None else "", "acc0"],
                       ["acc", "Y"], body=b)
    return model([loop], ins, [vi("acc", F, list(dims)), vi("Y", F, ["n", *dims])], inits)


def _feeds(init_const=True, n=3):
    feeds = {"X": np.arange(n, dtype=np.float32)}
    if not init_const:
        feeds["acc0"] = np.full(n, 2.0, np.float32)
    return feeds


def _rows_empty():
    """A loop over the rows of X (``Gather(X, i)``, trip count ``Shape(X)[0]``), X of the
    static shape [0, 2]: a sliced input of static length 0 once the passes have run."""
    b = body([h.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
              h.make_node("Add", ["s_in", "x_t"], ["s_out"]),
              h.make_node("Neg", ["s_out"], ["y_t"]),
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("s_in", F, [2])],
             [vi("c_out", B, []), vi("s_out", F, [2]), vi("y_t", F, [2])])
    nodes = [h.make_node("Shape", ["X"], ["shape"]),
             h.make_node("Gather", ["shape", "zero"], ["rows"], axis=0),
             h.make_node("Loop", ["rows", "", "s0"], ["s", "Y"], body=b)]
    return model(nodes, [vi("s0", F, [2]), vi("X", F, [0, 2])],
                 [vi("s", F, [2]), vi("Y", F, ["n", 2])], [const("zero", np.int64(0))])


CASES = {
    "trip_count_0": (lambda: _loop(), _feeds()),
    "trip_count_0_initial_value_an_input": (lambda: _loop(init_const=False),
                                            _feeds(init_const=False)),
    "initial_condition_false": (lambda: _loop(first=False), _feeds()),
    "element_shape_known_at_run_time": (lambda: _loop(init_const=False, dims=("n",)),
                                        _feeds(init_const=False, n=4)),
    "rows_of_an_empty_input": (_rows_empty, {"s0": np.ones(2, np.float32),
                                              "X": np.zeros((0, 2), np.float32)}),
}


def _written_loops(tmp_path) -> set:
    layers = ET.parse(tmp_path / "m.xml").getroot().iter("layer")
    return {"Loop", "TensorIterator"} & {layer.get("type") for layer in layers}


@pytest.mark.parametrize("case", CASES)
def test_no_iteration_runs_everywhere_as_in_onnx_runtime(case, tmp_path):
    make, feeds = CASES[case]
    assert_like_ort_everywhere(make(), feeds, tmp_path)
    assert not _written_loops(tmp_path)  # written as what it gives, not as a loop


def test_a_loop_that_runs_is_written_as_a_loop(tmp_path):
    assert_like_ort_everywhere(_loop(trip=2), _feeds(), tmp_path)
    assert _written_loops(tmp_path)
