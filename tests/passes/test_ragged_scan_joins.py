"""passes.ragged_scan_joins: a scan output split back into its pieces and joined on an
existing axis, whose pieces change length (``torch.onnx``'s ``out.append(x[:i+1])`` then
``torch.cat(out)``), is written to OpenVINO IR as a carried tensor grown by Concat; OpenVINO
computes the join a plain Python loop computes (before, its Loop returned the pieces stacked
into a buffer of another shape, without an error). The file itself is invalid ONNX (ONNX
Runtime and the backends refuse the ragged stack), which stays so."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper as h

import itergraph as ig
from itergraph.passes.ragged_scan_joins import ragged_scan_joins
from onnx_builders import I64, B, F, body, model, vi
from passutil import load, transformed

OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}


def appended(axis: int, ragged: bool = True):
    """``for i in range(n): out.append(x[..., :i+1 along axis] * (i+1))`` then the join on
    `axis`; not `ragged`: ``out.append(x[i] * (i+1))`` (rows of one shape), joined on 0."""
    if ragged:
        take = [h.make_node("Add", ["i", "one"], ["i1"]),
                h.make_node("Unsqueeze", ["i1", "zero1"], ["end"]),
                h.make_node("Slice", ["x", "zero1", "end", "axes"], ["part"])]
    else:
        take = [h.make_node("Add", ["i", "one"], ["i1"]),
                h.make_node("Gather", ["x", "i"], ["part"])]
    nodes = [*take, h.make_node("Cast", ["i1"], ["w"], to=F),
             h.make_node("Mul", ["part", "w"], ["piece"]),
             h.make_node("Identity", ["c"], ["c_out"])]
    b = body(nodes, [vi("i", I64, []), vi("c", B, [])],
             [vi("c_out", B, []), vi("piece", F, ["p0", "p1"][:2 if ragged else 1])])
    consts = [h.make_node("Constant", [], [n], value=h.make_tensor(n, I64, s, v))
              for n, s, v in (("one", [], [1]), ("zero1", [1], [0]), ("axes", [1], [axis]),
                              ("dim", [], [axis]))]
    outer = [*consts, h.make_node("Shape", ["x"], ["shape"]),
             h.make_node("Gather", ["shape", "dim"], ["n"]),
             h.make_node("Loop", ["n", ""], ["stacked"], body=b),
             h.make_node("SplitToSequence", ["stacked"], ["pieces"], keepdims=0),
             h.make_node("ConcatFromSequence", ["pieces"], ["y"], axis=axis)]
    y = vi("y", F, ["y0", "y1"][:2 if ragged else 1])
    return model(outer, [vi("x", F, ["a", "b"])], [y], opset=17)


def _python_loop(x: np.ndarray, axis: int) -> np.ndarray:
    pieces = [np.take(x, range(i + 1), axis=axis) * (i + 1) for i in range(x.shape[axis])]
    return np.concatenate(pieces, axis=axis)


@pytest.mark.parametrize("axis", [0, 1])
def test_ragged_join_runs_in_openvino_as_the_loop_computes(axis, tmp_path):
    import openvino as ov

    m = appended(axis)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    with pytest.raises(Exception, match="(?i)shape"):  # ONNX Runtime refuses the ragged stack
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})
    with pytest.raises(ig.ExecutionError, match="changes shape"):
        ig.load(m).run({"x": x})
    assert transformed(load(m), ragged_scan_joins)[1] == 1
    xml = tmp_path / "m.xml"
    ig.save(ig.load(m), xml)
    compiled = ov.Core().compile_model(str(xml), "CPU", OV_CONFIG)
    want = _python_loop(x, axis)
    got = compiled({"x": x})[compiled.outputs[0]]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)
    again = ig.load(xml).run({"x": x})  # the IR read back: the same join
    np.testing.assert_allclose(next(iter(again.values())), want, rtol=1e-6)


def test_pieces_of_one_shape_are_left_to_the_scan_output():
    """Rows of x (a fixed shape) keep the scan output form: nothing to grow."""
    m = appended(0, ragged=False)
    assert transformed(load(m), ragged_scan_joins)[1] == 0
