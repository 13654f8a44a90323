"""The portability rules: one row per (target, feature), as data.

Each `Rule` names the target, the loop feature, the scope it looks at (``"loop"``: each
canonical loop; ``"node"``: each node at any depth; ``"model"``: the model as a whole), a
predicate that returns a detail text when the feature is present (None when not), the
message as the target states it (`verbatim`: quoted from its source, else a paraphrase of the
documented limit), the transform that removes the feature (a name of
`transforms.table.TRANSFORMS`; ``WRITE`` when writing the file with itergraph is the fix;
None when no transform fixes it), and the page of the target's documentation, source or
issue tracker the rule comes from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..analysis import loop_features as f
from ..analysis.loop_features import Site
from ..ir.graph import Graph
from ..ir.loop import Invariant, Loop, Sliced
from .carried_shapes import shape_breaking_carried

#: The fix of a rule that writing the file with itergraph resolves (no transform needed).
WRITE = "write"

TARGETS = ("onnxruntime", "openvino", "openvino-npu", "tensorrt", "onnx2tf", "tvm-relax",
           "migraphx", "coreml")

#: Targets that refuse whatever another target refuses (same frontend), besides their own.
INHERITS = {"openvino-npu": "openvino"}


@dataclass(frozen=True)
class Rule:
    target: str
    feature: str
    scope: str
    applies: Callable[[Site | Graph], str | None]
    message: str
    fix: str | None
    cite: str
    verbatim: bool = True  # `message` quotes the target; False: it paraphrases the source


def _loop(pred: Callable[[Loop, Site], str | None]) -> Callable[[Site], str | None]:
    """A loop-scope predicate: `pred(loop, site)`, only called for canonical loops."""
    return lambda s: pred(s.node, s) if isinstance(s.node, Loop) else None


def _op(names: set[str]) -> Callable[[Site], str | None]:
    return lambda s: (f"{s.node.op_type} node" if s.node.op_type in names
                      and s.node.domain == "" else None)


def _scan_outputs_without_trip_count(loop: Loop, _s) -> str | None:
    # The parser gives a scan output the trip count as its length: with none (or one that
    # means 'unbounded'), the length is known only when the loop ends.
    outs = f.scan_outputs(loop)
    if outs and not loop.sliced and f.trip_count_value(loop) is None and \
            (loop.trip_count is None or f.const_value(loop.trip_count) is not None):
        names = ", ".join(f"'{p.output.name}'" for p in outs)
        what = "no trip count" if loop.trip_count is None else "an unbounded trip count"
        return f"scan output(s) {names} of a loop with {what}"
    return None


def _varying_scan_outputs(loop: Loop, _s) -> str | None:
    outs = f.varying_scan_outputs(loop)
    if outs:
        return "scan output(s) " + ", ".join(f"'{p.output.name}'" for p in outs) + \
            " stack pieces whose shape changes between iterations"
    return None


def _read_as(s: Site) -> str | None:
    op = s.node.meta.get("read_as")
    return f"{op} node (read as {s.node.op_type})" if op in ORT_REMOVED_OPS else None


def _op_before_its_opset(s: Site) -> str | None:
    n = s.node
    if n.domain != "" or n.version is None or "read_as" in n.meta or \
            isinstance(n, Loop) or n.op_type == "Constant":
        return None
    import onnx

    try:
        onnx.defs.get_schema(n.op_type, n.version, "")
    except onnx.defs.SchemaError:
        return f"{n.op_type} does not exist at opset {n.version}"
    return None


def _growing(loop: Loop, _s) -> str | None:
    shaped = f.shape_varying(loop)
    grow = [c for c in loop.carried if c.param.uid in shaped]
    if grow:
        return "carried value(s) " + ", ".join(f"'{c.param.name}'" for c in grow) + \
            " change shape between iterations"
    return None


def _shape_breaking_carry(loop: Loop, s: Site) -> str | None:
    opset = (s.root.opset("") if s.root is not None else None) or 17
    found = shape_breaking_carried(loop, opset)

    def shape(t) -> str:
        return "[" + ", ".join("?" if d is None else str(d) for d in t) + "]"

    return "; ".join(
        f"carried value '{c.param.name}' is declared {shape(a)} in the body and leaves it "
        f"{shape(b)}; If output(s) " +
        ", ".join(f"'{name}' ({branch}) get the shape {shape(t)} inferred from the declared "
                  "one" for name, branch, t in bad)
        for c, a, b, bad in found) or None


def _loop_op(static: bool) -> Callable[[Loop, Site], str | None]:
    def pred(loop: Loop, _s) -> str | None:
        if (f.count_kind(loop) in ("constant", "sliced")) == static:
            return f"a {f.count_kind(loop)}-count loop"
        return None
    return pred


def _trip_count(absent: bool) -> Callable[[Loop, Site], str | None]:
    def pred(loop: Loop, _s) -> str | None:
        if loop.sliced and loop.trip_count is None:
            return None  # a Scan: its length comes from its input
        if absent and (loop.trip_count is None or f.count_kind(loop) == "unbounded"):
            return "the loop has no trip count (or an unbounded one)"
        if not absent and loop.trip_count is not None and \
                f.const_value(loop.trip_count) is None:
            return f"the trip count '{loop.trip_count.name}' is not a constant"
        return None
    return pred


def _trip_count_above(limit: int) -> Callable[[Loop, Site], str | None]:
    def pred(loop: Loop, _s) -> str | None:
        n = f.trip_count_value(loop)
        return f"a constant trip count of {n} (> {limit})" if n is not None and n > limit else None
    return pred


def _data_dependent(kinds: tuple[str, ...]) -> Callable[[Loop, Site], str | None]:
    def pred(loop: Loop, _s) -> str | None:
        kind = f.count_kind(loop)
        return f"the iteration count is decided at run time ({kind})" if kind in kinds \
            else None
    return pred


def _passthrough(loop: Loop, _s) -> str | None:
    if not loop.origin.startswith("onnx."):
        return None
    pt = f.passthrough_carried(loop)
    return ("body input(s) " + ", ".join(f"'{c.param.name}'" for c in pt) +
            " returned unchanged as body output(s) of the same name") if pt else None


def _body_input_shadows(loop: Loop, s) -> str | None:
    """A Loop body input named like a value of the graph around the loop (paddle2onnx names
    the condition and carried inputs so): OpenVINO's ONNX frontend then miscounts the
    loop's inputs."""
    if loop.origin != "onnx.Loop":
        return None
    outer: set[str] = set()
    for g in (s.graph, s.root):
        if g is not None:
            outer |= {v.name for v in (*g.inputs, *g.initializers)}
            outer |= {v.name for n in g.nodes for v in n.outputs}
    named = [v.name for v in loop.body.inputs if v.name and v.name in outer]
    return ("body input(s) " + ", ".join(f"'{n}'" for n in named) + " named like values "
            "of the enclosing graph") if named else None


def _no_count_no_condition(loop: Loop, _s) -> str | None:
    if loop.origin == "onnx.Loop" and loop.trip_count is None and \
            loop.initial_condition is None:
        return "neither M nor cond is given"
    return None


def _scan(loop: Loop, _s) -> str | None:
    return "a Scan" if loop.origin == "onnx.Scan" and loop.ports_of(Sliced) else None


def _scan_reads_outer_values(loop: Loop, _s) -> str | None:
    if _scan(loop, _s) is None:
        return None
    # constants (initializers, Constant nodes) are fine: only values computed or fed at run
    # time trip OpenVINO up (the dynamo exports' Scans read weights and pass)
    read = [*loop.body.captures(), *(p.value for p in loop.input_ports
                                     if isinstance(p, Invariant))]
    outer = [v.name for v in read if v.const is None and not (
        v.producer is not None and v.producer.op_type == "Constant")]
    if outer:
        return "a Scan whose body reads " + ", ".join(f"'{n}'" for n in outer[:4]) + \
            (" ..." if len(outer) > 4 else "") + " from the enclosing graph"
    return None


def _empty_scan_input(loop: Loop, _s) -> str | None:
    if loop.origin != "onnx.Scan":
        return None
    for p in loop.sliced:
        s = f.shape_of(p.value)
        if s is not None and len(s) > p.axis and s[p.axis] == 0:
            return f"scan input '{p.value.name}' has length 0 on axis {p.axis}"
    return None


def _branch_initializer_output(s: Site) -> str | None:
    # Seen with ONNX IR version 4 files (tf2onnx at opset 7); IR 8 files of the same model
    # load, so the rule is limited to the old IR versions.
    ir = (s.root.meta.get("ir_version") if s.root is not None else None)
    if s.node.op_type != "If" or ir is None or ir > 4:
        return None
    bad = f.branch_initializer_outputs(s.node)
    return ", ".join(f"{b} output '{v.name}' is an initializer of the branch (IR version {ir})"
                     for b, v in bad) or None


def _branch_ranks(s: Site) -> str | None:
    if s.node.op_type != "If":
        return None
    bad = f.branch_rank_mismatch(s.node)
    return ", ".join(f"output {i}: rank {a} vs {b}" for i, a, b in bad) or None


def _split_to_sequence_dynamic_axis(s: Site) -> str | None:
    n = s.node
    if n.op_type != "SplitToSequence" or not n.inputs or n.inputs[0] is None:
        return None
    x, axis = n.inputs[0], int(n.attrs.get("axis", 0))
    shape = f.shape_of(x)
    if shape is not None and -len(shape) <= axis < len(shape) and \
            isinstance(shape[axis], str):
        return f"axis {axis} of '{x.name}' is the symbolic dimension '{shape[axis]}'"
    loop = f.scan_axis_source(x, axis)
    if loop is not None:
        return (f"axis {axis} of '{x.name}' is the scan axis of {f.node_label(loop)}, whose "
                "length is known only at run time")
    return None


def _dynamic_inputs(g: Graph) -> str | None:
    dyn = f.dynamic_inputs(g)
    return ("input(s) " + ", ".join(f"'{v.name}'" for v in dyn) + " have dynamic shapes") \
        if dyn else None


def _opset_below(k: int) -> Callable[[Graph], str | None]:
    def pred(g: Graph) -> str | None:
        v = g.opset("")
        return f"the model imports opset {v}" if v is not None and v < k else None
    return pred


_TRT_DOC = "https://github.com/onnx/onnx-tensorrt/blob/main/docs/operators.md"
_OV_LOOP = ("https://github.com/openvinotoolkit/openvino/blob/master/src/frontends/onnx/"
            "frontend/src/op/loop.cpp")
_OV_LOOP5 = ("https://docs.openvino.ai/2025/documentation/openvino-ir-format/"
             "operation-sets/operation-specs/infrastructure/loop-5.html")
_OV_NPU = ("https://docs.openvino.ai/2025/openvino-workflow/running-inference/"
           "inference-devices-and-modes/npu-device.html")
_MGX = "https://github.com/ROCm/AMDMIGraphX/blob/develop/src/onnx/parse_loop.cpp"
_TF = "https://github.com/PINTO0309/onnx2tf/blob/main/onnx2tf/ops/Loop.py"
_TVM = ("https://github.com/apache/tvm/blob/main/python/tvm/relax/frontend/onnx/"
        "onnx_frontend.py")
_CML = "https://github.com/onnx/onnx-coreml/issues/525"
_ORT = "https://github.com/microsoft/onnxruntime/blob/main/docs/OperatorKernels.md"
_ORT_IF = ("https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/providers/cpu/"
           "controlflow/if.cc")
_ORT_SCAN = ("https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/framework/"
             "ort_value_tensor_slicer.cc")

SEQUENCE_OPS = {"SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase",
                "SequenceInsert", "SequenceLength", "SequenceMap", "ConcatFromSequence",
                "SplitToSequence", "Optional", "OptionalGetElement", "OptionalHasElement"}
#: Experimental ONNX ops of the first opsets that ONNX Runtime registers no kernel for.
ORT_REMOVED_OPS = {"ConstantFill", "GivenTensorFill", "GRUUnit", "ATen"}

_OV_SCAN = ("https://github.com/openvinotoolkit/openvino/blob/master/src/frontends/onnx/"
            "frontend/src/op/scan.cpp")

RULES: tuple[Rule, ...] = (
    # ONNX Runtime
    Rule("onnxruntime", "removed-experimental-op", "node", _read_as,
         "Fatal error: ai.onnx:{op}(-1) is not a registered function/op", WRITE, _ORT),
    Rule("onnxruntime", "op-before-its-opset", "node", _op_before_its_opset,
         "This is an invalid model: the node's operator is not defined at the model's opset "
         "(re-export at a newer opset)", None,
         "https://github.com/onnx/onnx/blob/main/docs/Operators.md", verbatim=False),
    Rule("onnxruntime", "scan-output-shape-changes", "loop", _loop(_varying_scan_outputs),
         "Inconsistent shape in loop output for output", None,
         "https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/providers/cpu/"
         "controlflow/loop.cc"),
    Rule("onnxruntime", "empty-scan-input", "loop", _loop(_empty_scan_input),
         "Non-zero status code returned while running Scan node ... dim0_offset < dim0_size "
         "was false. Invalid dim0_offset of 0. Dimension 0 is 0", None, _ORT_SCAN),
    Rule("onnxruntime", "carried-shape-breaks-if-output", "loop", _loop(_shape_breaking_carry),
         "Non-zero status code returned while running If node ... The output OrtValue "
         "provided for output ... has shape ... but the computed output shape for this run "
         "is ...", None, _ORT_IF),
    # OpenVINO (CPU), reading ONNX through its ONNX frontend
    Rule("openvino", "passthrough-carried-value", "loop", _loop(_passthrough),
         "Check '(canonical_inputs.size() >= control_inputs_count && canonical_inputs.size()"
         " - control_inputs_count == loop_carried_dependencies.size())' failed", WRITE,
         _OV_LOOP),
    Rule("openvino", "body-input-shadows-outer-value", "loop", _loop(_body_input_shadows),
         "Check '(canonical_inputs.size() >= control_inputs_count && canonical_inputs.size()"
         " - control_inputs_count == loop_carried_dependencies.size())' failed", WRITE,
         _OV_LOOP),
    Rule("openvino", "scan-reads-outer-values", "loop", _loop(_scan_reads_outer_values),
         "Model wasn't fully converted (OpenVINO 2026.4's ONNX frontend fails on a Scan whose "
         "body reads a run-time value of the enclosing graph; ONNX Runtime runs it)",
         "scan-to-loop", _OV_SCAN, verbatim=False),
    Rule("openvino", "condition-not-boolean-scalar", "loop",
         _loop(lambda loop, _s: f.condition_problem(loop)),
         "Loop-5: the execution condition must be a boolean scalar or a 1D tensor with 1 "
         "element", None, _OV_LOOP5, verbatim=False),
    Rule("openvino", "if-branch-output-is-initializer", "node", _branch_initializer_output,
         "Output tensor was declared as a graph output but is not produced by any operation, "
         "is not an initializer, and cannot be resolved from a parent scope", WRITE,
         "https://github.com/openvinotoolkit/openvino/blob/master/src/frontends/onnx/"
         "frontend/src/core/graph.cpp"),
    Rule("openvino", "split-to-sequence-dynamic-axis", "node",
         _split_to_sequence_dynamic_axis,
         "Check 'axis_dimension.is_static()' failed at src/frontends/onnx/frontend/src/op/"
         "split_to_sequence.cpp", "infer-shapes",
         "https://github.com/openvinotoolkit/openvino/blob/master/src/frontends/onnx/"
         "frontend/src/op/split_to_sequence.cpp"),
    # OpenVINO NPU: static shapes only
    Rule("openvino-npu", "dynamic-input-shape", "model", _dynamic_inputs,
         "NPU plugin: dynamic shapes are not supported; reshape the model to static shapes",
         None, _OV_NPU, verbatim=False),
    Rule("openvino-npu", "run-time-trip-count", "loop", _loop(_data_dependent(("input",))),
         "NPU plugin: the loop's outputs have dynamic shapes (static shapes only)",
         "fold-trip-count", _OV_NPU, verbatim=False),
    Rule("openvino-npu", "data-dependent-iteration-count", "loop",
         _loop(_data_dependent(("while", "unbounded"))),
         "NPU plugin: the loop's outputs have dynamic shapes (static shapes only)", None,
         _OV_NPU, verbatim=False),
    # TensorRT through its ONNX parser
    Rule("tensorrt", "dynamic-scan-output-length", "loop",
         _loop(_scan_outputs_without_trip_count),
         "Loop: Scan output length cannot be dynamic", "step-model", _TRT_DOC),
    Rule("tensorrt", "loop-without-trip-limit", "loop", _loop(_no_count_no_condition),
         "a Loop needs a trip limit (ITripLimitLayer): neither a trip count nor a condition is "
         "given", None, "https://docs.nvidia.com/deeplearning/tensorrt/latest/"
         "inference-library/work-with-loops.html", verbatim=False),
    Rule("tensorrt", "carried-shape-changes", "loop", _loop(_growing),
         "Loop: The shape of Loop carried dependencies must be the same across all loop "
         "iterations", "step-model", _TRT_DOC),
    Rule("tensorrt", "sequence-or-optional", "node", _op(SEQUENCE_OPS),
         "{op}: not supported (the support matrix lists it as N)", None, _TRT_DOC, verbatim=False),
    Rule("tensorrt", "if-branch-rank-mismatch", "node", _branch_ranks,
         "If: Output tensors of the two conditional branches must have the same rank",
         "inline-if", _TRT_DOC),
    Rule("tensorrt", "opset-below-9", "model", _opset_below(9),
         "TensorRT supports operators in the inclusive range of opset 9 to opset 24", None,
         _TRT_DOC),
    # onnx2tf (TFLite)
    Rule("onnx2tf", "loop-without-count-or-condition", "loop", _loop(_no_count_no_condition),
         "Both M and cond in Loop are not set at the same time Tensorflow.", None, _TF),
    # TVM Relax
    Rule("tvm-relax", "loop-static-count", "loop", _loop(_loop_op(True)),
         "tvm.error.OpNotImplemented: The following operators are not supported for frontend "
         "ONNX: {op}", "unroll", _TVM),
    Rule("tvm-relax", "loop-dynamic-count", "loop", _loop(_loop_op(False)),
         "tvm.error.OpNotImplemented: The following operators are not supported for frontend "
         "ONNX: {op}", "step-model", _TVM),
    # MIGraphX
    Rule("migraphx", "trip-count-absent", "loop", _loop(_trip_count(True)),
         "PARSE_LOOP: without a trip count the loop runs at most max_loop_iterations "
         "(default 10) iterations; later ones are cut off", None, _MGX, verbatim=False),
    Rule("migraphx", "trip-count-not-constant", "loop", _loop(_trip_count(False)),
         "PARSE_LOOP: a trip count that is not a constant becomes max_loop_iterations "
         "(default 10); later iterations are cut off", "fold-trip-count", _MGX, verbatim=False),
    Rule("migraphx", "trip-count-too-large", "loop", _loop(_trip_count_above(65535)),
         "a constant trip count above 65535, the bound MIGraphX's loop is known to take",
         None, _MGX, verbatim=False),
    Rule("migraphx", "condition-not-scalar", "loop",
         _loop(lambda loop, _s: f.condition_problem(loop)),
         "PARSE_LOOP: max_iter_num and cond inputs must be scalar!", None, _MGX),
    # Core ML (onnx-coreml, the ONNX converter of coremltools <= 5)
    Rule("coreml", "scan", "loop", _loop(_scan),
         "NotImplementedError: Unsupported ONNX ops of type: Scan", "scan-to-loop", _CML),
    Rule("coreml", "sequence-or-optional", "node", _op(SEQUENCE_OPS),
         "NotImplementedError: Unsupported ONNX ops of type: {op}", None, _CML),
)


def rules_for(target: str) -> list[Rule]:
    """The rules of `target`, its inherited ones first."""
    out = []
    if target in INHERITS:
        out += rules_for(INHERITS[target])
    return out + [r for r in RULES if r.target == target]


#: The order fixes apply in when several are needed: folding and shape facts first, then
#: rewrites of one loop flavour into another, unrolling and the step model last.
FIX_ORDER = ("fold-trip-count", "inline-if", "infer-shapes", "dead-ports", "hoist",
             "fuse-cells", "scan-to-loop", "loop-to-scan", "loop-to-ti", "unroll", "step-model")
