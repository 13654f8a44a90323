"""Hostile cases whose fix belongs to code that other work is restructuring (the JAX backend,
the NumPy loop runner, the OpenVINO loop importers). They fail today; the expected outcome is
written as for the suite's cases. pytest does not collect this module (its name does not match
``test_*.py``) and `test_hostile` does not load it; run it with

    python tests/hostile/harness.py pending_cases

and move a case into its ``cases_*`` module once it passes.
"""

from __future__ import annotations

import numpy as np
from cases_onnx import _loop_feeds, _scan_feeds, _scan_model
from harness import Raises, Warns, case
from hostile_util import (
    I64,
    B,
    F,
    assert_close,
    counter_body,
    ig_run,
    model,
    ort_refuses,
    vi,
)
from onnx import helper as h

from itergraph.errors import ExecutionError, LeniencyWarning, ModelError

BOTH = ("numpy", "jax")


# -- JAX backend ------------------------------------------------------------------------------

# -- the NumPy loop runner (and the JAX loops) ------------------------------------------------

@case("onnx/loop_trip_count_with_two_elements_at_run_time",
      Raises(ExecutionError, "'L'", "trip count"), backends=BOTH)
def _(c):
    # today: InputError (the caller's fault), but the model computed the trip count
    node = h.make_node("Loop", ["M", "cond", "x0"], ["x_final", "xs"], name="L",
                       body=counter_body())
    m = model([node], [vi("M", I64, None), vi("cond", B, []), vi("x0", F, [2])],
              [vi("x_final", F, None), vi("xs", F, None)])
    ig_run(c, m, {**_loop_feeds(), "M": np.array([2, 3], np.int64)})


@case("onnx/scan_inputs_of_different_sequence_lengths_at_run_time",
      Raises(ExecutionError, "'S'", "sequence length"), backends=BOTH)
def _(c):
    # shapes unknown when loading: today the loop runs to the shortest input
    m = _scan_model(n_scan=2, in_shapes=[[None, 2], [None, 2]])
    ort_refuses(m, _scan_feeds((3, 5), 2))
    ig_run(c, m, _scan_feeds((3, 5), 2))


@case("onnx/scan_zero_length_sequence",
      Warns(LeniencyWarning, "'S'", "zero"), backends=BOTH)
def _(c):
    # ONNX Runtime and the reference evaluator refuse an empty scan input when the Scan has
    # scan outputs; itergraph runs it (empty outputs, states unchanged) and says so
    m = _scan_model(in_shapes=[[None, 2]])
    feeds = _scan_feeds((0,))
    ort_refuses(m, feeds)
    got = ig_run(c, m, feeds)
    assert_close(got["s_final"], np.zeros(2, np.float32))
    assert got["Y0"].shape == (0, 2)



# -- OpenVINO loop importers (port-map checks inside import_loops) ----------------------------

def _loop5_edit(c, old: str, new: str):
    from cases_openvino import _sub
    from hostile_util import ov_loop5

    xml, w = ov_loop5(c)
    return _sub(xml, old, new), w


_LOOP5_FEEDS = [np.int64(3), np.zeros(2, np.float32)]


@case("ov/loop5_carried_parameter_of_another_element_type",
      Raises(ModelError, "layer 3 'L'", "'xb'", "i64"))
def _(c):
    # the body reads x as i64, the loop feeds f32 and the back edge returns f32: OpenVINO
    # refuses; today itergraph runs it with f32 values
    from hostile_util import ig_read_ov, ov_refuses

    xml, w = _loop5_edit(c, '<data shape="2" element_type="f32" />\n\t\t\t\t\t\t<output>\n'
                         '\t\t\t\t\t\t\t<port id="0" precision="FP32" names="xb">',
                         '<data shape="2" element_type="i64" />\n\t\t\t\t\t\t<output>\n'
                         '\t\t\t\t\t\t\t<port id="0" precision="I64" names="xb">')
    ov_refuses(xml, w, _LOOP5_FEEDS)
    ig_read_ov(c, xml, w)


@case("ov/loop5_current_iteration_parameter_of_type_f32",
      Raises(ModelError, "layer 3 'L'", "'it'", "current_iteration"))
def _(c):
    from hostile_util import ig_read_ov, ov_refuses

    xml, w = _loop5_edit(c, '<data shape="" element_type="i64" />\n\t\t\t\t\t\t<output>\n'
                         '\t\t\t\t\t\t\t<port id="0" precision="I64" names="it" />',
                         '<data shape="" element_type="f32" />\n\t\t\t\t\t\t<output>\n'
                         '\t\t\t\t\t\t\t<port id="0" precision="FP32" names="it" />')
    ov_refuses(xml, w, _LOOP5_FEEDS)
    ig_read_ov(c, xml, w)


@case("ov/loop5_carried_parameter_of_another_shape",
      Raises(ModelError, "layer 3 'L'", "'xb'", "shape"))
def _(c):
    from hostile_util import ig_read_ov, ov_refuses

    xml, w = _loop5_edit(c, '<data shape="2" element_type="f32" />\n\t\t\t\t\t\t<output>\n'
                         '\t\t\t\t\t\t\t<port id="0" precision="FP32" names="xb">\n'
                         '\t\t\t\t\t\t\t\t<dim>2</dim>',
                         '<data shape="3" element_type="f32" />\n\t\t\t\t\t\t<output>\n'
                         '\t\t\t\t\t\t\t<port id="0" precision="FP32" names="xb">\n'
                         '\t\t\t\t\t\t\t\t<dim>3</dim>')
    ov_refuses(xml, w, _LOOP5_FEEDS)
    ig_read_ov(c, xml, w)
