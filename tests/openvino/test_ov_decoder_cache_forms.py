"""Standard-ONNX greedy decoder loops in the K/V cache forms exporters write (a preallocated
cache written by ScatterND, a cache held as an ONNX sequence, a cache grown by Concat next
to a cross attention over an encoder memory computed before the loop, an If on the first
iteration that reads the whole prompt): itergraph's NumPy and JAX backends and the OpenVINO
IR itergraph writes give ONNX Runtime's tokens, and the JAX backend compiles the loop whole
(not yet the If form: its branches grow the cache by different lengths)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

import itergraph as ig  # noqa: E402
from itergraph.backends import jax as jb  # noqa: E402
from itergraph.frontends.onnx import read  # noqa: E402

VOCAB, HIDDEN, STEPS, PROMPT = 12, 8, 6, 3
FORMS = ("scatternd", "sequence", "cross", "if_prefill")
COMPILED = {"scatternd", "sequence", "cross"}  # the JAX backend compiles the whole loop


def _weights() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)  # tokens that change from step to step
    shapes = {"emb": (VOCAB, HIDDEN), "pemb": (STEPS, HIDDEN), "wq": (HIDDEN, HIDDEN),
              "wk": (HIDDEN, HIDDEN), "wv": (HIDDEN, HIDDEN), "wo": (HIDDEN, VOCAB),
              "wm": (HIDDEN, HIDDEN)}
    return {n: (1.5 * rng.standard_normal(s)).astype(np.float32) for n, s in shapes.items()}


def _attend(keys: str, values: str, mask: str | None, memory: bool) -> list:
    """The step after its keys and values: attention of the token's query over them (plus a
    cross attention over `mem` when `memory`), the logits, the next token by ArgMax."""
    scores = "s"
    nodes = [h.make_node("MatMul", ["x", "wq"], ["q"]),
             h.make_node("Transpose", [keys], ["kt"], perm=[0, 2, 1]),
             h.make_node("MatMul", ["q", "kt"], ["s"])]
    if mask:
        nodes.append(h.make_node("Add", ["s", mask], ["sm"]))
        scores = "sm"
    nodes += [h.make_node("Softmax", [scores], ["p"], axis=-1),
              h.make_node("MatMul", ["p", values], ["ctx"])]
    other = "x"
    if memory:
        nodes += [h.make_node("Transpose", ["mem"], ["mt"], perm=[0, 2, 1]),
                  h.make_node("MatMul", ["x", "mt"], ["cs"]),
                  h.make_node("Softmax", ["cs"], ["cp"], axis=-1),
                  h.make_node("MatMul", ["cp", "mem"], ["cx"])]
        other = "cx"
    return nodes + [h.make_node("Sub", ["ctx", other], ["r"]),
                    h.make_node("MatMul", ["r", "wo"], ["logits"]),
                    h.make_node("ArgMax", ["logits"], ["tok_out"], axis=-1, keepdims=0)]


def _kv(x: str, tag: str) -> list:
    return [h.make_node("MatMul", [x, "wk"], [f"{tag}k"]),
            h.make_node("MatMul", [x, "wv"], [f"{tag}v"])]


def _concat_branch(tag: str, x: str) -> onnx.GraphProto:
    nodes = _kv(x, tag) + [h.make_node("Concat", ["kc", f"{tag}k"], [f"{tag}kc"], axis=1),
                           h.make_node("Concat", ["vc", f"{tag}v"], [f"{tag}vc"], axis=1)]
    outs = [h.make_tensor_value_info(f"{tag}{n}", T.FLOAT, [1, None, HIDDEN])
            for n in ("kc", "vc")]
    return h.make_graph(nodes, tag, [], outs)


def _cache(form: str) -> tuple[list, list, dict, list]:
    """(body nodes writing the cache as `kc_n`, `vc_n`, the cache's type, outer nodes making
    its initial value `kc0`, `vc0`, further initializers)."""
    grown = h.make_tensor_type_proto(T.FLOAT, [1, None, HIDDEN])
    if form == "scatternd":  # [1, STEPS, H] written at the iteration's row
        kind = h.make_tensor_type_proto(T.FLOAT, [1, STEPS, HIDDEN])
        body = _kv("x", "") + [
            h.make_node("Unsqueeze", ["i", "zero"], ["i1"]),
            h.make_node("Concat", ["zero", "i1"], ["ij"], axis=0),
            h.make_node("Reshape", ["ij", "idx_shape"], ["idx"]),
            h.make_node("ScatterND", ["kc", "idx", "k"], ["kc_n"]),
            h.make_node("ScatterND", ["vc", "idx", "v"], ["vc_n"]),
            h.make_node("Range", ["zero_s", "steps", "one_s"], ["at"]),
            h.make_node("LessOrEqual", ["at", "i"], ["written"]),
            h.make_node("Where", ["written", "f0", "fneg"], ["mask"])]
        zeros = np.zeros((1, STEPS, HIDDEN), np.float32)
        inits = [nh.from_array(np.array([0], np.int64), "zero"),
                 nh.from_array(np.array([1, 1, 2], np.int64), "idx_shape"),
                 nh.from_array(np.array(0, np.int64), "zero_s"),
                 nh.from_array(np.array(STEPS, np.int64), "steps"),
                 nh.from_array(np.array(1, np.int64), "one_s"),
                 nh.from_array(np.array(0, np.float32), "f0"),
                 nh.from_array(np.array(-1e9, np.float32), "fneg"),
                 nh.from_array(zeros, "kc0"), nh.from_array(zeros, "vc0")]
        return body, [], kind, inits
    if form == "sequence":  # one [1, 1, H] entry per step, concatenated where read
        kind = h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT, [1, 1, HIDDEN]))
        body = _kv("x", "") + [h.make_node("SequenceInsert", ["kc", "k"], ["kc_n"]),
                               h.make_node("SequenceInsert", ["vc", "v"], ["vc_n"]),
                               h.make_node("ConcatFromSequence", ["kc_n"], ["keys"], axis=1),
                               h.make_node("ConcatFromSequence", ["vc_n"], ["values"], axis=1)]
        outer = [h.make_node("SequenceEmpty", [], [n], dtype=T.FLOAT) for n in ("kc0", "vc0")]
        return body, outer, kind, []
    empty = np.zeros((1, 0, HIDDEN), np.float32)
    inits = [nh.from_array(empty, "kc0"), nh.from_array(empty, "vc0")]
    if form == "cross":  # grown by Concat; the memory read inside the loop
        body = _kv("x", "") + [h.make_node("Concat", ["kc", "k"], ["kc_n"], axis=1),
                               h.make_node("Concat", ["vc", "v"], ["vc_n"], axis=1)]
        outer = [h.make_node("Gather", ["emb", "src"], ["se"]),
                 h.make_node("MatMul", ["se", "wm"], ["mem"])]
        return body, outer, grown, inits
    # if_prefill: the first iteration appends the prompt's keys and values, later ones the token's
    body = [h.make_node("Gather", ["emb", "prompt"], ["px"]),
            h.make_node("Equal", ["i", "zero_s"], ["first"]),
            h.make_node("If", ["first"], ["kc_n", "vc_n"],
                        then_branch=_concat_branch("prompt_", "px"),
                        else_branch=_concat_branch("token_", "x"))]
    return body, [], grown, inits + [nh.from_array(np.array(0, np.int64), "zero_s")]


def decoder_loop(form: str) -> onnx.ModelProto:
    """A greedy decoder Loop of STEPS steps from the token `start`, its cache in `form`."""
    cache_nodes, outer, kind, inits = _cache(form)
    keys, values = ("keys", "values") if form == "sequence" else ("kc_n", "vc_n")
    body_nodes = [h.make_node("Identity", ["c"], ["c_out"]),
                  h.make_node("Gather", ["emb", "tok"], ["x0"]),
                  h.make_node("Gather", ["pemb", "i"], ["pe"]),
                  h.make_node("Add", ["x0", "pe"], ["x"]),
                  *cache_nodes,
                  *_attend(keys, values, "mask" if form == "scatternd" else None,
                           form == "cross"),
                  h.make_node("Identity", ["tok_out"], ["tok_scan"])]
    tok = [1, 1]
    body = h.make_graph(
        body_nodes, "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
         h.make_tensor_value_info("tok", T.INT64, tok), h.make_value_info("kc", kind),
         h.make_value_info("vc", kind)],
        [h.make_tensor_value_info("c_out", T.BOOL, []),
         h.make_tensor_value_info("tok_out", T.INT64, tok), h.make_value_info("kc_n", kind),
         h.make_value_info("vc_n", kind), h.make_tensor_value_info("tok_scan", T.INT64, tok)])
    loop = h.make_node("Loop", ["n", "", "start", "kc0", "vc0"], ["tok_f", "k_f", "v_f", "toks"],
                       body=body)
    extra = {"cross": "src", "if_prefill": "prompt"}.get(form)
    inputs = [h.make_tensor_value_info("start", T.INT64, tok)]
    if extra:
        inputs.append(h.make_tensor_value_info(extra, T.INT64, [1, PROMPT]))
    g = h.make_graph([*outer, loop], form, inputs,
                     [h.make_tensor_value_info("toks", T.INT64, [STEPS, 1, 1])],
                     [*(nh.from_array(a, n) for n, a in _weights().items()),
                      nh.from_array(np.array(STEPS, np.int64), "n"), *inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(m)
    return m


def _feeds(form: str) -> dict:
    feeds = {"start": np.array([[3]], np.int64)}
    if form in ("cross", "if_prefill"):
        feeds["src" if form == "cross" else "prompt"] = np.array([[1, 5, 7]], np.int64)
    return feeds


@pytest.mark.parametrize("form", FORMS)
def test_decoder_loop_tokens_on_both_backends_and_in_openvino(tmp_path, form):
    path = tmp_path / f"{form}.onnx"
    onnx.save(decoder_loop(form), str(path))
    feeds = _feeds(form)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    assert len(set(want.ravel().tolist())) > 2  # the tokens change: the cache is read
    np.testing.assert_array_equal(ig.load(path).run(feeds, backend="numpy")["toks"], want)
    cg = jb.compile_graph(read(str(path)))
    np.testing.assert_array_equal(cg.run(feeds)["toks"], want)
    if form in COMPILED:
        assert all(r.compiles for r in cg.explain()), cg.explain()
    xml = tmp_path / f"{form}.xml"
    ig.save(ig.load(path), xml)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32"})
    got = compiled.create_infer_request().infer(feeds)[compiled.outputs[0]]
    np.testing.assert_array_equal(np.asarray(got), want)
