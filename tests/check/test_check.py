"""`ig.check` and ``itergraph check``: each target's refusals, with their fixes, on models
built here; where the target is a peer we run (ONNX Runtime, OpenVINO), the peer confirms."""

from __future__ import annotations

from pathlib import Path

import check_models as M
import numpy as np
import onnx
import pytest

import itergraph as ig
from itergraph import cli
from itergraph.errors import InputError
from itergraph.portability import RULES, TARGETS, WRITE, check, fixes_for
from itergraph.transforms import TRANSFORMS, Transform

CORPUS = Path(__file__).parents[1] / "realworld" / "models"
PASSTHROUGH = CORPUS / "tf" / "while_counted_op13.onnx"  # tf2onnx: n carried unchanged
SPLIT_SCAN = CORPUS / "torch" / "list_append_cat_op11.onnx"  # SplitToSequence over a scan axis
GROWING_PIECES = SPLIT_SCAN  # its Loop also stacks x[:i+1] * (i+1): pieces of growing size
CONSTANT_FILL = CORPUS / "torch" / "lstm_op7.onnx"  # torch at opset 7 writes ConstantFill
IF_INITIALIZER = CORPUS / "tf" / "autograph_while_break_op7.onnx"  # IR 4: If returns a weight
SHADOWING = CORPUS / "paddle" / "while_halving_op13.onnx"  # paddle2onnx: body inputs named as
#                                                            the outer values fed to them

# (model builder, target) -> the (feature, fix) pairs the check must report.
REFUSED = [
    (M.while_loop_with_scan_output, "tensorrt", {("dynamic-scan-output-length", "step-model")}),
    (M.growing_carried_loop, "tensorrt", {("carried-shape-changes", "step-model")}),
    (M.sequence_loop, "tensorrt", {("sequence-or-optional", None)}),
    (M.loop_without_count_or_condition, "tensorrt", {("loop-without-trip-limit", None)}),
    (M.sequence_loop, "coreml", {("sequence-or-optional", None)}),
    (M.scan_model, "coreml", {("scan", "scan-to-loop")}),
    (M.loop_without_count_or_condition, "onnx2tf", {("loop-without-count-or-condition", None)}),
    (M.counted_loop, "tvm-relax", {("loop-static-count", "unroll")}),
    (M.while_loop_with_scan_output, "tvm-relax", {("loop-dynamic-count", "step-model")}),
    (M.runtime_count_loop, "migraphx", {("trip-count-not-constant", None)}),  # fed by the user
    (M.while_loop_with_scan_output, "migraphx", {("trip-count-absent", None)}),
    (lambda: M.counted_loop(70000, scan_output=False), "migraphx",
     {("trip-count-too-large", None)}),
    (M.runtime_count_loop, "openvino-npu", {("run-time-trip-count", None)}),
    (M.while_loop_with_scan_output, "openvino-npu",
     {("data-dependent-iteration-count", None)}),
    (lambda: M.counted_loop(static=False), "openvino-npu", {("dynamic-input-shape", None)}),
    (lambda: M.scan_model(0), "onnxruntime", {("empty-scan-input", None)}),
    (lambda: PASSTHROUGH, "openvino", {("passthrough-carried-value", WRITE)}),
    (lambda: SHADOWING, "openvino", {("body-input-shadows-outer-value", WRITE)}),
    (lambda: SPLIT_SCAN, "openvino", {("split-to-sequence-dynamic-axis", None)}),
    (lambda: CORPUS / "torch" / "for_range_input_op7.onnx", "tensorrt",
     {("opset-below-9", None)}),
    (lambda: CONSTANT_FILL, "onnxruntime", {("removed-experimental-op", WRITE)}),
    (lambda: CORPUS / "torch" / "beam_search_op8.onnx", "onnxruntime",
     {("op-before-its-opset", None)}),
    (lambda: GROWING_PIECES, "onnxruntime", {("scan-output-shape-changes", None)}),
    (lambda: IF_INITIALIZER, "openvino", {("if-branch-output-is-initializer", WRITE)}),
    (M.if_rank_mismatch, "tensorrt", {("if-branch-rank-mismatch", None)}),
]

# (model builder, target): models the target accepts.
ACCEPTED = [
    (M.counted_loop, t) for t in TARGETS if t != "tvm-relax"
] + [
    (M.scan_model, t) for t in ("onnxruntime", "openvino", "openvino-npu", "tensorrt",
                                "migraphx", "onnx2tf")
] + [
    (M.while_loop_with_scan_output, t) for t in ("onnxruntime", "openvino", "onnx2tf",
                                                 "coreml")
] + [(M.growing_carried_loop, "migraphx"), (M.runtime_count_loop, "tensorrt"),
     (lambda: M.counted_loop(65535, scan_output=False), "migraphx")]


def _id(case) -> str:
    build, target = case[0], case[1]
    return f"{getattr(build, '__name__', 'model')}-{target}"


@pytest.mark.parametrize("case", [c for c in REFUSED if any(
    fix not in (None, WRITE) for _, fix in c[2])], ids=_id)
def test_every_fix_the_check_names_removes_its_finding(case, tmp_path):
    build, target, _ = case
    model = build()
    fixed = ig.optimize(model, target=target)
    assert check(fixed, target).ok
    ig.save(fixed, tmp_path / "fixed.onnx")
    assert check(tmp_path / "fixed.onnx", target).ok


@pytest.mark.parametrize("case", REFUSED, ids=_id)
def test_refused_model_gets_the_finding_and_its_fix(case):
    build, target, expected = case
    report = check(build(), target)
    assert not report.ok
    assert {(f.feature, f.fix) for f in report.findings} == expected
    for f in report.findings:
        assert f.where and f.message and f.cite.startswith("https://")
    assert fixes_for(build(), target) == sorted({fix for _, fix in expected
                                                 if fix and fix != WRITE})


@pytest.mark.parametrize("case", ACCEPTED, ids=_id)
def test_accepted_model_gets_no_finding(case):
    build, target = case
    report = check(build(), target)
    assert report.ok, report.text()
    assert fixes_for(build(), target) == []


def test_finding_names_the_loop_and_the_enclosing_loops():
    outer_body = onnx.helper.make_graph(
        [onnx.helper.make_node("Identity", ["oc"], ["oc_out"]),
         *M.while_loop_with_scan_output().graph.node],
        "outer_body",
        [M.vi("j", M.I64, []), M.vi("oc", M.B, []), M.vi("x", M.F, [2])],
        [M.vi("oc_out", M.B, []), M.vi("y", M.F, [2]), M.vi("ys", M.F, [None, 2])],
        list(M.while_loop_with_scan_output().graph.initializer))
    m = M.model([onnx.helper.make_node("Loop", ["n", "", "x0"], ["z", "zs"], body=outer_body,
                                       name="outer")],
                [M.vi("x0", M.F, [2])], [M.vi("z", M.F, [2]), M.vi("zs", M.F, [2, None, 2])],
                [M.const("n", 2, "int64")])
    (f,) = check(m, "tensorrt").findings
    assert f.where == "Loop 'outer' > Loop 'grow_while'"
    assert "'ys'" in f.detail and "Scan output length cannot be dynamic" in f.message


def test_every_target_has_rules_with_sources_and_known_fixes():
    known = {"unroll", "loop-to-scan", "scan-to-loop", "loop-to-ti", "fuse-cells",
             "fold-trip-count", "infer-shapes", "dead-ports", "inline-if", "hoist",
             "step-model", WRITE, None}
    assert {r.target for r in RULES} == set(TARGETS)
    for r in RULES:
        assert r.fix in known and r.cite.startswith("https://") and r.message
    keys = [(r.target, r.feature) for r in RULES]
    assert len(keys) == len(set(keys))


def test_unknown_target_is_an_input_error():
    with pytest.raises(InputError, match="unknown check target 'tflite'"):
        check(M.counted_loop(), "tflite")


# ----- peers confirm: the refusal happens, and the pass runs -----

def _ort_runs(path) -> bool:
    import onnxruntime as ort

    try:
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        feeds = {i.name: np.ones([d if isinstance(d, int) else 2 for d in i.shape],
                                 np.float32 if "float" in i.type else np.int64)
                 for i in sess.get_inputs()}
        sess.run(None, feeds)
        return True
    except Exception:
        return False


def _ov_compiles(path) -> bool:
    import openvino as ov

    try:
        ov.Core().compile_model(str(path), "CPU")
        return True
    except Exception:
        return False


@pytest.mark.parametrize("build", [M.counted_loop, M.scan_model, M.while_loop_with_scan_output,
                                   M.runtime_count_loop, M.growing_carried_loop],
                         ids=lambda b: b.__name__)
def test_peers_run_what_the_check_passes(build, tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(build(), path)
    assert check(path, "onnxruntime").ok and _ort_runs(path)
    assert check(path, "openvino").ok and _ov_compiles(path)


def test_onnxruntime_refuses_the_empty_scan_input_the_check_predicts(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(M.scan_model(0), path)
    (finding,) = check(path, "onnxruntime").findings
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception) as err:
        sess.run(None, {"a0": np.zeros(2, np.float32), "xs": np.zeros((0, 2), np.float32)})
    assert finding.message.split("... ")[1] in str(err.value)


def _corpus_feeds(path: Path) -> dict:
    with np.load(path.with_suffix(".npz")) as z:
        sess_inputs = __import__("onnxruntime").InferenceSession(
            str(path), providers=["CPUExecutionProvider"]).get_inputs()
        return {i.name: z[f"in{k}"] for k, i in enumerate(sess_inputs)}


def test_onnxruntime_fails_where_the_check_predicts_and_runs_the_fixed_file(tmp_path):
    import onnxruntime as ort

    with pytest.raises(Exception, match="ConstantFill"):
        ort.InferenceSession(str(CONSTANT_FILL), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match="Inconsistent shape in loop output"):
        ort.InferenceSession(str(GROWING_PIECES), providers=["CPUExecutionProvider"]).run(
            None, _corpus_feeds(GROWING_PIECES))
    out = tmp_path / "fixed.onnx"
    assert cli.main(["check", str(CONSTANT_FILL), "--target", "onnxruntime", "--fix",
                     str(out)]) == 0
    assert check(out, "onnxruntime").ok and _ort_runs(out)


@pytest.mark.parametrize("source", [PASSTHROUGH, SPLIT_SCAN, IF_INITIALIZER],
                         ids=lambda p: p.stem)
def test_openvino_refuses_what_the_check_predicts(source, tmp_path):
    report = check(source, "openvino")
    assert not report.ok
    assert not _ov_compiles(source)
    if all(f.fix == WRITE for f in report.findings):
        out = tmp_path / "fixed.onnx"
        assert cli.main(["check", str(source), "--target", "openvino", "--fix", str(out)]) == 0
        assert check(out, "openvino").ok and _ov_compiles(out)


@pytest.mark.parametrize("target,feature", [("openvino", "condition-not-boolean-scalar"),
                                            ("migraphx", "condition-not-scalar")])
@pytest.mark.parametrize("cond", [np.array(True), np.array([1.0], np.float32),
                                  np.array([True, False])], ids=["bool", "float", "two"])
def test_condition_must_be_one_boolean(target, feature, cond):
    from itergraph.ir.graph import Value
    from itergraph.ir.traversal import loops

    m = ig.load(M.counted_loop())
    ((loop, _),) = loops(m.graph)
    loop.initial_condition = Value("c0", const=cond)
    found = {f.feature for f in check(m, target).findings}
    assert (feature in found) == (cond.dtype != bool or cond.size != 1)


# ----- CLI and the --fix plumbing -----

def test_cli_exit_status(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(M.while_loop_with_scan_output(), path)
    assert cli.main(["check", str(path), "--target", "openvino"]) == 0
    assert cli.main(["check", str(path), "--target", "tensorrt"]) == 1
    out = capsys.readouterr().out
    assert "Loop 'grow_while'" in out and "step-model" in out and "onnx-tensorrt" in out
    assert cli.main(["check", str(tmp_path / "missing.onnx"), "--target", "tensorrt"]) == 2


class _FoldToThree:
    """A stand-in pass: makes every loop's trip count the constant 3 (records its calls)."""

    calls = 0

    def __call__(self, graph):
        from itergraph.ir.graph import Value
        from itergraph.ir.traversal import loops

        type(self).calls += 1
        for loop, _ in loops(graph):
            loop.trip_count = Value("three", const=np.array(3, np.int64))
            graph.initializers.append(loop.trip_count)
        return 1


def test_fix_applies_the_named_transforms_through_optimize(tmp_path, monkeypatch):
    monkeypatch.setitem(TRANSFORMS, "fold-trip-count",
                        Transform.of("fold-trip-count", "stand-in", _FoldToThree()))
    path, out = tmp_path / "m.onnx", tmp_path / "o.onnx"
    onnx.save(M.runtime_count_loop(), path)
    assert cli.main(["check", str(path), "--target", "migraphx", "--fix", str(out)]) == 0
    assert _FoldToThree.calls >= 1
    assert check(out, "migraphx").ok
    x = np.array([1.0, 2.0], np.float32)
    n = np.array(5, np.int64)  # the stand-in made the count 3: x doubled 3 times, not 5
    np.testing.assert_allclose(ig.load(out).run({"x": x, "n": n})["y"], x * 8)
    assert check(ig.optimize(path, target="migraphx"), "migraphx").ok


def _trt_parser_accepts(m: onnx.ModelProto) -> bool:
    import itergraph.network as trt

    logger = trt.Logger(trt.Logger.INTERNAL_ERROR)
    parser = trt.OnnxParser(trt.Builder(logger).create_network(0), logger)
    return parser.parse(m.SerializeToString())


@pytest.mark.parametrize("build", [M.counted_loop, M.while_loop_with_scan_output,
                                   M.growing_carried_loop, M.sequence_loop, M.scan_model,
                                   M.loop_without_count_or_condition, M.runtime_count_loop,
                                   M.if_rank_mismatch], ids=lambda b: b.__name__)
def test_tensorrt_check_agrees_with_itergraphs_tensorrt_style_parser(build):
    # itergraph.network's OnnxParser models onnx-tensorrt's importers (the TensorRT peer here)
    m = build()
    assert check(m, "tensorrt").ok == _trt_parser_accepts(m)


def _scan_reading_an_outer_value() -> onnx.ModelProto:
    """s, y = s + x_t * w over the rows of x, with w read from the enclosing graph."""
    from onnx import TensorProto as T
    from onnx import helper as h

    def vi(name, shape):
        return h.make_tensor_value_info(name, T.FLOAT, shape)

    body = h.make_graph(
        [h.make_node("Mul", ["x_t", "w"], ["p"]), h.make_node("Add", ["s", "p"], ["s2"]),
         h.make_node("Identity", ["s2"], ["y"])], "b",
        [vi("s", [2]), vi("x_t", [2])], [vi("s2", [2]), vi("y", [2])])
    g = h.make_graph(
        [h.make_node("Scan", ["s0", "x"], ["sT", "ys"], body=body, num_scan_inputs=1,
                     name="rows")], "g",
        [vi("s0", [2]), vi("x", [3, 2]), vi("w", [2])], [vi("sT", [2]), vi("ys", [3, 2])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_openvino_refuses_a_scan_reading_outer_values_and_the_fix_runs(tmp_path):
    import onnxruntime as ort

    path, fixed = tmp_path / "scan.onnx", tmp_path / "fixed.onnx"
    onnx.save(_scan_reading_an_outer_value(), path)
    report = check(path, "openvino")
    assert [(f.feature, f.fix) for f in report.findings] == [("scan-reads-outer-values",
                                                             "scan-to-loop")]
    assert not _ov_compiles(path)
    assert cli.main(["check", str(path), "--target", "openvino", "--fix", str(fixed)]) == 0
    feeds = {"s0": np.zeros(2, np.float32), "x": np.arange(6, dtype=np.float32).reshape(3, 2),
             "w": np.float32([2, 3])}
    import openvino as ov

    compiled = ov.Core().compile_model(str(fixed), "CPU")
    got = compiled(feeds)
    want = ort.InferenceSession(str(path)).run(None, feeds)
    for out, w in zip(compiled.outputs, want):
        np.testing.assert_allclose(got[out], w, rtol=1e-6)


def test_public_functions_are_not_shadowed_by_modules():
    import importlib
    import pkgutil

    import itergraph

    for mod in pkgutil.walk_packages(itergraph.__path__, "itergraph."):
        if not mod.name.startswith("itergraph.ray") and not mod.name.endswith("__main__"):
            importlib.import_module(mod.name)
    for name in ("check", "compare", "optimize", "load", "save"):
        assert callable(getattr(ig, name)) and not isinstance(getattr(ig, name), type(ig)), name


def _ort_runs_iterations(m, n: int) -> bool:
    import onnxruntime as ort

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    try:
        sess.run(None, {"x": np.arange(3, dtype=np.float32), "n": np.array(n, np.int64)})
        return True
    except Exception as e:  # noqa: BLE001 - ORT's run-time failure is what is measured
        assert "If node" in str(e) and "computed output shape" in str(e), e
        return False


# (declared shape of the carried z in the body, what the body does): z changes rank
# (unsqueeze / sum in an If, or unsqueeze alone) or length (concat in an If).
SHAPE_CHANGING_CARRIES = [((3,), "unsqueeze-sum"), (("a",), "unsqueeze-sum"),
                          (None, "unsqueeze-sum"), ((3,), "unsqueeze"), (None, "unsqueeze"),
                          ((3,), "concat"), (("a",), "concat"), (None, "concat")]


@pytest.mark.parametrize("declared,branches", SHAPE_CHANGING_CARRIES,
                         ids=[f"{b}-{d}" for d, b in SHAPE_CHANGING_CARRIES])
def test_onnxruntime_fails_on_a_carried_shape_change_where_the_check_predicts(declared,
                                                                             branches):
    """ONNX Runtime allocates an If output of the static shape inferred from the carried
    value's declared shape: the check flags exactly the loops ORT then fails on (from the
    second iteration; zero and one iteration run)."""
    m = M.rank_changing_carry(declared, branches)
    report = check(m, "onnxruntime")
    assert _ort_runs_iterations(m, 0) and _ort_runs_iterations(m, 1)
    assert report.ok == _ort_runs_iterations(m, 4)
    if not report.ok:
        (finding,) = report.findings
        assert finding.feature == "carried-shape-breaks-if-output"
        assert finding.where == "Loop 'reshaper'"
        assert "carried value 'z'" in finding.detail


def test_rank_changing_carry_in_the_corpus_is_flagged_by_name():
    path = CORPUS / "torch-unseen" / "rank_changing_carry_op14.onnx"
    (finding,) = check(path, "onnxruntime").findings
    assert finding.where == "Loop '/Loop'"
    assert "carried value 'z.29' is declared [3] in the body and leaves it [1, 3]" in \
        finding.detail
