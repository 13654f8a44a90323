# ruff: noqa: UP037, F821, B007 - ONNX Script reads "B", "N" in annotations as symbolic dimensions and "for i in range(n)" as a Loop
"""Real-world corpus source ``onnxscript``: ONNX programs written by hand in ONNX Script
(``onnxscript.script``), the way operator authors and exporter writers write them: Python
``for``/``while``/``if`` become ``Loop`` and ``If``, helper functions become model-local
functions (``FunctionProto``, with attribute parameters), lists become sequences.

Run by hand from the repository root, in the environment of ``gen_torch.py`` (README.md;
onnxscript comes with torch's exporter)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_onnxscript.py

The stored outputs are ONNX Runtime's on each file (``oracle="onnxruntime"``);
``peer["reference"]`` records how ONNX's own reference evaluator (``onnx.reference``) compares
and ``peer["openvino"]`` how OpenVINO's ONNX frontend fares.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import onnxscript  # noqa: E402
import openvino as ov  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402
from onnxscript import BOOL, FLOAT, INT64, graph, script  # noqa: E402
from onnxscript import opset18 as op  # noqa: E402
from onnxscript.values import Opset  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402
from peer_record import compare, message, run_peer  # noqa: E402

warnings.filterwarnings("ignore")
local = Opset("local.fns", 1)


# -------------------------------------------------------------------- model-local functions
@script(local, default_opset=op)
def quick_gelu(x, alpha: float = 1.702):
    """An attribute parameter: ``x * sigmoid(alpha * x)``."""
    a = op.CastLike(alpha, x)
    return x * op.Sigmoid(a * x)


@script(local, default_opset=op)
def rms_norm(x, g):
    ms = op.ReduceMean(x * x, op.Constant(value_ints=[-1]), keepdims=1)
    return x / op.Sqrt(ms + op.CastLike(1e-6, x)) * g


@script(local, default_opset=op)
def block(x, w, g):
    """Calls two other local functions."""
    return rms_norm(quick_gelu(op.MatMul(x, w), alpha=1.5), g)


@script(default_opset=op)
def functions_nested(x: FLOAT["B", 8], w: FLOAT[8, 8], g: FLOAT[8]) -> FLOAT["B", 8]:
    return block(block(x, w, g), w, g)


@script(default_opset=op)
def function_attr_default(x: FLOAT["B", 5]) -> FLOAT["B", 5]:
    return quick_gelu(x) + quick_gelu(x, alpha=0.5)


# -------------------------------------------------------------------- for loops
@script(default_opset=op)
def for_tanh_recurrence(x: FLOAT[4, 3], n: INT64) -> FLOAT[4, 3]:
    y = x
    for i in range(n):
        y = op.Tanh(y * op.CastLike(0.9, y) + op.CastLike(i, y) * op.CastLike(0.1, y))
    return y


@script(default_opset=op)
def for_const_range(x: FLOAT[3]) -> FLOAT[3]:
    y = x
    for i in range(5):
        y = y + op.CastLike(i, y) * y
    return y


@script(default_opset=op)
def for_growing_concat(x: FLOAT[2], n: INT64) -> FLOAT["M", 2]:
    """A carried value that grows by one row per iteration (Concat in the body)."""
    acc = op.Unsqueeze(x, op.Constant(value_ints=[0]))
    y = x
    for i in range(n):
        y = op.Sin(y) + op.CastLike(i, y)
        acc = op.Concat(acc, op.Unsqueeze(y, op.Constant(value_ints=[0])), axis=0)
    return acc


@script(default_opset=op)
def for_sequence(x: FLOAT[3, 2], n: INT64) -> FLOAT["M", 3, 2]:
    """Steps appended to a sequence, stacked at the end (SequenceEmpty / SequenceInsert /
    ConcatFromSequence)."""
    seq = op.SequenceEmpty(dtype=1)
    y = x
    for i in range(n):
        y = op.Relu(y - op.CastLike(0.2, y)) + op.Cos(y)
        seq = op.SequenceInsert(seq, y)
    return op.ConcatFromSequence(seq, axis=0, new_axis=1)


@script(default_opset=op)
def for_nested(x: FLOAT[2, 3], n: INT64, m: INT64) -> FLOAT[2, 3]:
    y = x
    for i in range(n):
        z = y
        for j in range(m):
            z = z * op.CastLike(0.5, z) + op.CastLike(j, z)
        y = y + op.Tanh(z)
    return y


@script(default_opset=op)
def for_with_if(x: FLOAT[4], n: INT64) -> FLOAT[4]:
    y = x
    for i in range(n):
        if op.Equal(op.Mod(i, op.Constant(value=np.int64(2))), op.Constant(value=np.int64(0))):
            y = y + op.CastLike(1.0, y)
        else:
            y = y * op.CastLike(-0.5, y)
    return y


@script(default_opset=op)
def for_function_body(x: FLOAT[2, 8], w: FLOAT[8, 8], g: FLOAT[8], n: INT64) -> FLOAT[2, 8]:
    """A local function called inside a loop body."""
    y = x
    for i in range(n):
        y = block(y, w, g)
    return y


@script(default_opset=op)
def for_break(x: FLOAT[3], n: INT64) -> FLOAT[3]:
    """``break`` out of a ``for`` (the loop's condition output)."""
    y = x
    for i in range(n):
        y = y * op.CastLike(1.5, y)
        big = op.ReduceMax(y, keepdims=0) > op.CastLike(10.0, y)
        if big:
            break
    return y


@script(default_opset=op)
def scan_decay(x: FLOAT["T", 3]) -> FLOAT["T", 3]:
    """A ``Scan`` whose body is an ONNX Script ``graph``: a decaying running sum."""
    @graph()
    def body(acc: FLOAT[3], xt: FLOAT[3]):
        s = acc * op.CastLike(0.5, acc) + xt
        return s, s

    init = op.Mul(op.Constant(value_floats=[0.0, 0.0, 0.0]), op.Constant(value_float=1.0))
    last, ys = op.Scan(init, x, body=body, num_scan_inputs=1)
    return ys


# -------------------------------------------------------------------- while loops
@script(default_opset=op)
def while_newton_sqrt(x: FLOAT[5]) -> FLOAT[5]:
    y = x
    go = op.Constant(value=np.array(True))
    while go:
        y = op.CastLike(0.5, y) * (y + x / y)
        go = op.ReduceMax(op.Abs(y * y - x), keepdims=0) > op.CastLike(1e-4, y)
    return y


@script(default_opset=op)
def while_count_halvings(x: FLOAT[1]) -> INT64:
    """How many halvings bring x below 1 (a counter carried with a value)."""
    k = op.Constant(value=np.int64(0))
    y = x
    go = op.ReduceMax(y, keepdims=0) >= op.CastLike(1.0, y)
    while go:
        y = y * op.CastLike(0.5, y)
        k = k + op.Constant(value=np.int64(1))
        go = op.ReduceMax(y, keepdims=0) >= op.CastLike(1.0, y)
    return k


# -------------------------------------------------------------------- if
@script(default_opset=op)
def if_rank_differs(x: FLOAT[3, 4], flag: BOOL) -> FLOAT:
    """Branches of different rank: a scalar sum or the 2-D square."""
    if flag:
        y = op.ReduceSum(x, keepdims=0)
    else:
        y = x * x
    return y


@script(default_opset=op)
def if_sign_branch(x: FLOAT["N"]) -> FLOAT["N"]:
    if op.ReduceSum(x, keepdims=0) > op.CastLike(0.0, x):
        y = op.Relu(x)
    else:
        y = op.Neg(x) * op.CastLike(2.0, x)
    return y


@script(default_opset=op)
def if_shape_differs(x: FLOAT[3, 4], flag: BOOL) -> FLOAT["A", "B"]:
    """Branches whose outputs differ in shape (a transpose on one side)."""
    if flag:
        y = op.Transpose(x, perm=[1, 0])
    else:
        y = x * x
    return y


@script(default_opset=op)
def if_nested_in_loop_in_if(x: FLOAT[3], n: INT64, flag: BOOL) -> FLOAT[3]:
    y = x
    if flag:
        for i in range(n):
            if op.ReduceSum(y, keepdims=0) > op.CastLike(0.0, y):
                y = y - op.CastLike(1.0, y)
            else:
                y = y + op.CastLike(0.25, y)
    else:
        y = op.Exp(y)
    return y


def rnd(*shape, seed=0, scale=1.0):
    return (scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)


def i64(v):
    return np.array(v, np.int64)


W8 = rnd(8, 8, seed=1, scale=0.4)
G8 = rnd(8, seed=2)
#: name -> (program, feeds, description)
CASES = {
    "functions_nested": (functions_nested, {"x": rnd(3, 8), "w": W8, "g": G8},
                         "local functions calling local functions, an attribute argument"),
    "function_attr_default": (function_attr_default, {"x": rnd(2, 5)},
                              "a local function's attribute: its default and a given value"),
    "for_tanh_recurrence": (for_tanh_recurrence, {"x": rnd(4, 3), "n": i64(6)},
                            "for over a run-time count, loop index used in the body"),
    "for_zero_iterations": (for_tanh_recurrence, {"x": rnd(4, 3), "n": i64(0)},
                            "the same loop run zero times"),
    "for_const_range": (for_const_range, {"x": rnd(3)}, "for over a constant range"),
    "for_growing_concat": (for_growing_concat, {"x": rnd(2), "n": i64(4)},
                           "a carried value that grows one row per iteration"),
    "for_growing_concat_zero": (for_growing_concat, {"x": rnd(2), "n": i64(0)},
                                "the growing carried value, zero iterations"),
    "for_sequence": (for_sequence, {"x": rnd(3, 2), "n": i64(5)},
                     "a sequence appended in a loop, stacked after it"),
    "for_nested": (for_nested, {"x": rnd(2, 3), "n": i64(3), "m": i64(4)},
                   "a loop in a loop, both counts run-time"),
    "for_with_if": (for_with_if, {"x": rnd(4), "n": i64(5)},
                    "an if on the loop index inside the loop"),
    "for_function_body": (for_function_body, {"x": rnd(2, 8), "w": W8, "g": G8, "n": i64(3)},
                          "a local function called in a loop body"),
    "while_newton_sqrt": (while_newton_sqrt, {"x": np.abs(rnd(5)) + 0.5},
                          "while with a data-dependent condition (Newton's square root)"),
    "while_count_halvings": (while_count_halvings, {"x": np.array([37.0], np.float32)},
                             "while carrying a counter and a value"),
    "while_no_iteration": (while_count_halvings, {"x": np.array([0.5], np.float32)},
                           "the while loop whose condition is false at once"),
    "for_break": (for_break, {"x": np.abs(rnd(3)) + 0.5, "n": i64(20)},
                  "break out of a for loop on a data-dependent condition"),
    "scan_decay": (scan_decay, {"x": rnd(5, 3)}, "a Scan whose body is an ONNX Script graph"),
    "if_rank_differs_true": (if_rank_differs, {"x": rnd(3, 4), "flag": np.array(True)},
                             "if whose branches give different ranks (this run: a scalar)"),
    "if_rank_differs_false": (if_rank_differs, {"x": rnd(3, 4), "flag": np.array(False)},
                              "if whose branches give different ranks (this run: [3, 4])"),
    "if_sign_branch": (if_sign_branch, {"x": rnd(6)}, "if on a reduced value"),
    "if_shape_differs_true": (if_shape_differs, {"x": rnd(3, 4), "flag": np.array(True)},
                              "if whose branches give different shapes (this run: [4, 3])"),
    "if_shape_differs_false": (if_shape_differs, {"x": rnd(3, 4), "flag": np.array(False)},
                               "if whose branches give different shapes (this run: [3, 4])"),
    "if_loop_if": (if_nested_in_loop_in_if, {"x": rnd(3), "n": i64(6), "flag": np.array(True)},
                   "an if inside a loop inside an if"),
}


def run_ort(path: Path, feeds: dict) -> list:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in sess.run(None, feeds)]


def add(corpus: Corpus, name: str) -> str:
    fn, feeds, description = CASES[name]
    model = fn.to_model_proto()
    path = corpus.path(name, ".onnx")
    onnx.save(model, str(path))
    feeds = {i.name: feeds[i.name] for i in model.graph.input}
    want = run_ort(path, feeds)
    try:
        ref = [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds)]
        reference = compare(ref, want, 1e-5, 1e-6)
    except Exception as e:  # noqa: BLE001 - the evaluator's refusal is recorded
        reference = f"error: {message(e)}"
    peers = {"reference": reference,
             "openvino": run_peer("openvino", path, feeds, want, 1e-4, 1e-5)}
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    corpus.add(name, path, feeds, want, converter=f"onnxscript {onnxscript.__version__}",
               opset=opset, oracle="onnxruntime", rtol=1e-4, atol=1e-5,
               description=description, output_names=[o.name for o in model.graph.output],
               peer=peers)
    return f"{name}: {peers}"


def main() -> None:
    versions = {"onnxscript": onnxscript.__version__, "onnx": onnx.__version__,
                "onnxruntime": ort.__version__, "openvino": ov.__version__,
                "numpy": np.__version__}
    corpus = Corpus("onnxscript", versions)
    for name in CASES:
        try:
            print(add(corpus, name), flush=True)
        except Exception as e:  # noqa: BLE001 - a program that fails is reported
            print(f"{name}: left out: {type(e).__name__}: {message(e)}", flush=True)
    corpus.save()
    corpus.prune()
    print(f"\n{len(corpus.models)} onnxscript entries")


if __name__ == "__main__":
    main()
