"""The transforms users can name, in the order ``itergraph optimize --list`` prints them."""

from __future__ import annotations

from ..passes.cells import ops as cell_ops
from ..passes.dead_ports import dead_ports
from ..passes.fold_trip_count import fold_trip_count
from ..passes.hoist_invariants import hoist_invariants
from ..passes.inline_if import inline_if
from ..passes.lower_generation import lower_generation
from ..passes.state_io import state_io
from ..shapes.infer_shapes import infer_shapes
from ..tracing.mark import MarkTensors
from .loop_forms import LOOP_FORMS
from .registry import Transform
from .step_model import StepModel
from .unroll import UNROLL

TRANSFORMS: dict[str, Transform] = {t.name: t for t in (
    Transform.of("fold-trip-count", "a trip count known from constants or shapes becomes a "
                 "constant", fold_trip_count),
    Transform.of("inline-if", "an If with a static condition becomes its branch", inline_if),
    Transform.of("dead-ports", "unused loop ports, loops and nodes are removed", dead_ports),
    Transform.of("hoist", "loop-invariant body nodes move out of their loop", hoist_invariants),
    Transform.of("infer-shapes", "static element types and shapes of every value, through "
                 "loops", infer_shapes),
    UNROLL,
    *LOOP_FORMS,
    Transform("fuse-cells", "LSTM/GRU/RNN cell loops become the LSTM/GRU/RNN operator "
              "(=lstm+gru: those kinds only)", cell_ops.for_kinds, argument="KINDS"),
    Transform("step-model", "one iteration of a loop as a model with its state as inputs and "
              "outputs", StepModel, "LOOP"),
    Transform.of("state-io", "variables (ReadValue/Assign) become inputs <id>, <id>/is_set and "
                 "outputs <id>/next: a stateless model", state_io),
    Transform.of("lower-generation", "ONNX Runtime's GreedySearch / BeamSearch (decoder-only) "
                 "become standard ONNX ops: the first step, then a Loop over the tokens",
                 lower_generation),
    Transform("mark", "body tensors (NAMES joined by '+'; default: carried values and "
              "conditions) become graph outputs through scan outputs of their loops",
              lambda arg: MarkTensors(None if arg is None else arg.split("+")), "NAMES"),
)}

#: What ``optimize`` runs when given neither passes nor a target: the clean-ups, then LSTM
#: and GRU loops as operators (ONNX Runtime's RNN operator is slower than a loop from batch 4
#: on, see README), then shapes written out.
DEFAULT: tuple[str, ...] = ("fold-trip-count", "inline-if", "dead-ports", "hoist",
                            "fuse-cells=lstm+gru", "infer-shapes")
