"""ONNX Runtime's fused transformer operators (``com.microsoft``: SkipLayerNormalization,
SkipSimplifiedLayerNormalization, Gelu, BiasGelu, FastGelu, QuickGelu, BiasAdd; and
SimplifiedLayerNormalization, which ONNX Runtime registers in the standard domain) on both
backends against ONNX Runtime (one thread), the model written back to ONNX re-run in ONNX
Runtime, and the OpenVINO IR (standard ops, `frontends.onnx.contrib_expand`) in OpenVINO.

Float outputs are compared at rtol = atol = 1e-5: ONNX Runtime's erf/tanh/exp are MLAS
polynomial approximations and its layer norms accumulate in one pass, both within about 1e-6
of the exact values on these inputs.

``BiasAdd`` has no CPU kernel in ONNX Runtime: it is checked against its formula.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper as h
from onnx import numpy_helper
from test_ms_contrib_ops import check, f, ms_model, node, run_ov

import itergraph as ig
from onnx_builders import run_ort

TOL = dict(rtol=1e-5, atol=1e-5)


def one_node(op, feeds: dict, ins: list[str], outs: list[str], domain="com.microsoft",
             **attrs):
    """A one-node model: `ins` ("" for an absent input) from `feeds`, `outs` ("" absent)."""
    n = h.make_node(op, ins, outs, domain=domain, **attrs)
    return ms_model([n], {k: feeds[k] for k in ins if k}, {}, [o for o in outs if o])


# ---------------------------------------------------------------------------- layer norms


@pytest.mark.parametrize("skip_shape", ["same", "1SH", "SH"])
@pytest.mark.parametrize("beta,bias", [(True, True), (True, False), (False, True),
                                       (False, False)])
def test_skip_layer_norm(tmp_path, skip_shape, beta, bias):
    B, S, H = 2, 5, 64
    skip = {"same": f(B, S, H), "1SH": f(1, S, H), "SH": f(S, H)}[skip_shape]
    feeds = {"x": f(B, S, H, s=2.0), "s": skip, "g": f(H), "b": f(H), "bi": f(H)}
    ins = ["x", "s", "g", "b" if beta else "", "bi" if bias else ""]
    while ins[-1] == "":
        ins.pop()
    m = one_node("SkipLayerNormalization", feeds, ins, ["y", "mean", "inv", "sum"])
    check(m, {k: feeds[k] for k in ins if k}, tmp_path, **TOL)


@pytest.mark.parametrize("outs", [["y"], ["y", "mean"], ["y", "", "inv"], ["y", "", "", "sum"],
                                  ["y", "mean", "inv"]])
def test_skip_layer_norm_outputs(tmp_path, outs):
    feeds = {"x": f(3, 768), "s": f(3, 768), "g": f(768), "b": f(768), "bi": f(768)}
    m = one_node("SkipLayerNormalization", feeds, ["x", "s", "g", "b", "bi"], outs,
                 epsilon=1e-5)
    check(m, feeds, tmp_path, **TOL)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("outs", [["y"], ["y", "mean", "inv", "sum"], ["y", "", "", "sum"]])
def test_skip_simplified_layer_norm(tmp_path, bias, outs):
    feeds = {"x": f(2, 4, 96), "s": f(1, 4, 96), "g": f(96), "bi": f(96)}
    ins = ["x", "s", "g"] + (["bi"] if bias else [])
    m = one_node("SkipSimplifiedLayerNormalization", feeds, ins, outs, epsilon=1e-6)
    check(m, {k: feeds[k] for k in ins}, tmp_path, **TOL)


@pytest.mark.parametrize("axis", [-1, -2, 2, 1])
@pytest.mark.parametrize("outs", [["y"], ["y", "inv"]])
def test_simplified_layer_norm(tmp_path, axis, outs):
    """ONNX Runtime's standard-domain op (no ONNX schema)."""
    x = f(2, 3, 4, 8, s=3.0)
    scale = f(*x.shape[axis % 4:])
    feeds = {"x": x, "g": scale}
    m = one_node("SimplifiedLayerNormalization", feeds, ["x", "g"], outs, domain="",
                 axis=axis, epsilon=1e-6)
    check(m, feeds, tmp_path, **TOL)


def test_simplified_layer_norm_default_epsilon(tmp_path):
    """The default epsilon (1e-5) dominates the mean square of tiny inputs."""
    feeds = {"x": f(2, 3, 16, s=1e-3), "g": f(16)}
    m = one_node("SimplifiedLayerNormalization", feeds, ["x", "g"], ["y"], domain="")
    check(m, feeds, tmp_path, **TOL)


def test_skip_layer_norm_default_epsilon(tmp_path):
    """The default epsilon is 1e-12: inputs of size 1e-4 are still normalized to unit size."""
    feeds = {"x": f(2, 3, 16, s=1e-4), "s": f(2, 3, 16, s=1e-4), "g": f(16)}
    m = one_node("SkipLayerNormalization", feeds, ["x", "s", "g"], ["y"])
    check(m, feeds, tmp_path, **TOL)
    y = ig.load(m).run(feeds, backend="numpy")["y"]
    assert np.abs(y).max() > 0.1


# ---------------------------------------------------------------------------- activations


@pytest.mark.parametrize("op,ins,attrs", [
    ("Gelu", ["x"], {}),
    ("BiasGelu", ["x", "bi"], {}),
    ("FastGelu", ["x"], {}),
    ("FastGelu", ["x", "bi"], {}),
    ("QuickGelu", ["x"], {}),
    ("QuickGelu", ["x"], {"alpha": 1.0}),
    ("QuickGelu", ["x"], {"alpha": -0.5}),
])
@pytest.mark.parametrize("shape", [(2, 5, 64), (7, 33)])
def test_gelu_family(tmp_path, op, ins, attrs, shape):
    x = f(*shape, s=4.0)
    x.flat[:4] = [-60.0, 60.0, 0.0, -1e-3]
    feeds = {"x": x, "bi": f(shape[-1])}
    m = one_node(op, feeds, ins, ["y"], **attrs)
    check(m, {k: feeds[k] for k in ins}, tmp_path, **TOL)


def test_bias_add(tmp_path):
    """Formula check: ONNX Runtime has no CPU kernel for BiasAdd."""
    feeds = {"x": f(2, 16, 32), "bi": f(32), "s": f(2, 16, 32)}
    m = one_node("BiasAdd", feeds, ["x", "bi", "s"], ["y"])
    want = feeds["x"] + feeds["bi"] + feeds["s"]
    for backend in ("numpy", "jax"):
        got = ig.load(m).run(feeds, backend=backend)["y"]
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=backend)
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    np.testing.assert_allclose(run_ov(xml, feeds)[0], want, rtol=1e-6, atol=1e-6)
    bad = {**feeds, "bi": f(16)}
    m = ms_model([node("BiasAdd", ["x", "bi", "s"], ["y"], name="ba")], bad, {}, ["y"])
    for backend in ("numpy", "jax"):
        with pytest.raises(ig.ModelError, match="BiasAdd node 'ba'.*bias"):
            ig.load(m).run(bad, backend=backend)


def test_simplified_layer_norm_axis_out_of_range():
    feeds = {"x": f(2, 3), "g": f(3)}
    n = h.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y"], axis=2, name="sln")
    m = ms_model([n], feeds, {}, ["y"])
    for backend in ("numpy", "jax"):
        with pytest.raises(ig.ModelError, match="SimplifiedLayerNormalization node 'sln'"):
            ig.load(m).run(feeds, backend=backend)


def test_in_one_graph(tmp_path):
    """A GPT-2 block tail as ORT's optimizer writes it: SkipLayerNormalization (its sum
    output feeding the next residual), MatMul, FastGelu with bias, MatMul, and the next
    SkipLayerNormalization."""
    H, F4 = 32, 128
    feeds = {"x": f(2, 3, H), "attn": f(2, 3, H)}
    consts = {"g1": f(H), "b1": f(H), "bo": f(H), "w1": f(H, F4, s=0.2), "fb": f(F4),
              "w2": f(F4, H, s=0.2), "g2": f(H), "b2": f(H), "bias2": f(H)}
    nodes = [node("SkipLayerNormalization", ["attn", "x", "g1", "b1", "bo"],
                  ["ln", "", "", "res"], epsilon=1e-5),
             h.make_node("MatMul", ["ln", "w1"], ["mm1"]),
             node("FastGelu", ["mm1", "fb"], ["act"]),
             h.make_node("MatMul", ["act", "w2"], ["mm2"]),
             node("SkipLayerNormalization", ["mm2", "res", "g2", "b2", "bias2"], ["y"],
                  epsilon=1e-5)]
    m = ms_model(nodes, feeds, consts, ["y"])
    check(m, feeds, tmp_path, **TOL)


# ---------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("op,feeds,ins", [
    ("SkipLayerNormalization", {"x": f(1, 2, 3, 8), "s": f(1, 2, 3, 8), "g": f(8)},
     ["x", "s", "g"]),
    ("SkipLayerNormalization", {"x": f(2, 3, 8), "s": f(8), "g": f(8)}, ["x", "s", "g"]),
    ("SkipLayerNormalization", {"x": f(2, 3, 8), "s": f(2, 1, 8), "g": f(8)}, ["x", "s", "g"]),
    ("SkipLayerNormalization", {"x": f(2, 3, 8), "s": f(2, 3, 8), "g": f(4)}, ["x", "s", "g"]),
    ("SkipSimplifiedLayerNormalization", {"x": f(2, 3, 8), "s": f(2, 3, 8), "g": f(8),
                                          "bi": f(3)}, ["x", "s", "g", "bi"]),
    ("BiasGelu", {"x": f(2, 3, 8), "bi": f(3, 8)}, ["x", "bi"]),
    ("FastGelu", {"x": f(2, 3, 8), "bi": f(4)}, ["x", "bi"]),
])
def test_refused_shapes_name_the_node(op, feeds, ins):
    """Shapes ONNX Runtime refuses raise `ModelError` naming the node on both backends."""
    n = h.make_node(op, ins, ["y"], domain="com.microsoft", name="bad")
    m = ms_model([n], feeds, {}, ["y"])
    with pytest.raises((ort.capi.onnxruntime_pybind11_state.Fail,
                        ort.capi.onnxruntime_pybind11_state.InvalidArgument,
                        ort.capi.onnxruntime_pybind11_state.RuntimeException)):
        run_ort(m, feeds)
    for backend in ("numpy", "jax"):
        with pytest.raises(ig.ModelError, match=f"{op} node 'bad'"):
            ig.load(m).run(feeds, backend=backend)


# ---------------------------------------------------------------------------- Attention

B, S, D, N, P = 2, 4, 16, 2, 3


def _masks() -> dict:
    t = P + S
    raw = np.ones((B, t), np.int32)
    raw[0, :2] = 0
    raw[1, -1] = 0
    full = np.ones((B, t), np.int32)
    full[0, :5] = 0  # left padding: the first queries of row 0 see only masked keys
    raw3 = (np.random.default_rng(3).random((B, S, t)) > 0.3).astype(np.int32)
    raw3[0, 0] = 0
    return {"none": None, "raw": raw, "left_padded": full, "raw3d": raw3,
            "lengths": np.array([2, 7], np.int32), "end_start": np.array([7, 7, 5, 0], np.int32),
            "lengths_3b2": np.array([5, 3, 0, 2, 4, 0, 1, 2], np.int32)}


MASKS = _masks()


def attention_model(mask: str, past: bool, unidirectional: int, outs=("y", "present"),
                    attention_bias: bool = False, **attrs):
    feeds = {"x": f(B, S, D), "w": f(D, 3 * D, s=0.5), "b": f(3 * D)}
    ins = ["x", "w", "b"]
    if MASKS[mask] is not None:
        feeds["m"] = MASKS[mask] if past else MASKS[mask][..., P:] if mask in (
            "raw", "left_padded", "raw3d") else np.minimum(MASKS[mask], S)
    ins.append("m" if "m" in feeds else "")
    if past:
        feeds["p"] = f(2, B, N, P, D // N)
    ins.append("p" if past else "")
    if attention_bias:
        feeds["ab"] = f(1, N, S, S + (P if past else 0))
        ins.append("ab")
    while ins[-1] == "":
        ins.pop()
    n = node("Attention", ins, list(outs), num_heads=N, unidirectional=unidirectional, **attrs)
    return ms_model([n], feeds, {}, list(outs)), feeds


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("past", [True, False])
@pytest.mark.parametrize("unidirectional", [1, 0])
def test_attention(tmp_path, mask, past, unidirectional):
    """GPT-2's form (unidirectional, past/present, a 2-D mask) and BERT's (bidirectional),
    with every mask_index form ORT's CPU kernel takes; fully masked queries of a left-padded
    row included."""
    outs = ("y", "present") if past else ("y",)
    m, feeds = attention_model(mask, past, unidirectional, outs)
    check(m, feeds, tmp_path, **TOL)


@pytest.mark.parametrize("attrs", [{"scale": 0.3}, {"mask_filter_value": -1e9},
                                   {"qkv_hidden_sizes": [16, 16, 16]}])
def test_attention_attributes(tmp_path, attrs):
    m, feeds = attention_model("left_padded", True, 1, **attrs)
    check(m, feeds, tmp_path, **TOL)


def test_attention_bias_and_unequal_v(tmp_path):
    """An additive attention_bias, and a V hidden size unlike Q/K's (no past)."""
    m, feeds = attention_model("raw", False, 1, ("y",), attention_bias=True)
    check(m, feeds, tmp_path, **TOL)
    feeds = {"x": f(B, S, D), "w": f(D, 16 + 16 + 8, s=0.5), "b": f(40)}
    n = node("Attention", ["x", "w", "b"], ["y"], num_heads=2, qkv_hidden_sizes=[16, 16, 8])
    check(ms_model([n], feeds, {}, ["y"]), feeds, tmp_path, **TOL)


def test_attention_refusals():
    """ORT's 4-D Megatron mask (ORT's CPU kernel refuses it too) and rotary embedding are
    refused naming the node; weights that do not split into Q/K/V are a ModelError."""
    feeds = {"x": f(B, S, D), "w": f(D, 3 * D), "m": np.ones((B, 1, S, S), np.int32)}
    m = ms_model([node("Attention", ["x", "w", "", "m"], ["y"], num_heads=N, name="att")],
                 feeds, {}, ["y"])
    for backend in ("numpy", "jax"):
        with pytest.raises(ig.UnsupportedError, match="Attention node 'att'.*mask_index"):
            ig.load(m).run(feeds, backend=backend)
    feeds = {"x": f(B, S, D), "w": f(D, 3 * D)}
    m = ms_model([node("Attention", ["x", "w"], ["y"], num_heads=N, do_rotary=1, name="att")],
                 feeds, {}, ["y"])
    with pytest.raises(ig.UnsupportedError, match="att.*do_rotary"):
        ig.load(m).run(feeds, backend="numpy")
    feeds = {"x": f(B, S, D), "w": f(D, 3 * D + 1)}
    m = ms_model([node("Attention", ["x", "w"], ["y"], num_heads=N, name="att")],
                 feeds, {}, ["y"])
    for backend in ("numpy", "jax"):
        with pytest.raises(ig.ModelError, match="att.*divisible"):
            ig.load(m).run(feeds, backend=backend)


# ---------------------------------------------------------------------------- float16


@pytest.mark.parametrize("op,ins,outs", [
    ("SkipLayerNormalization", ["x", "s", "g", "b", "bi"], ["y", "mean", "inv", "sum"]),
    ("SkipSimplifiedLayerNormalization", ["x", "s", "g", "bi"], ["y", "mean", "inv", "sum"]),
    ("Gelu", ["x"], ["y"]),
    ("BiasGelu", ["x", "bi"], ["y"]),
    ("FastGelu", ["x", "bi"], ["y"]),
    ("QuickGelu", ["x"], ["y"]),
])
def test_float16(tmp_path, op, ins, outs):
    """Half-precision inputs are computed in float32 (sums included) and cast back, as ORT's
    CPU kernels do: outputs within one float16 ulp, the float32 statistics within float32
    rounding; on both backends and in the OpenVINO IR."""
    from onnx import TensorProto as T

    rng = np.random.default_rng(11)
    feeds = {k: rng.standard_normal(s).astype(np.float16) for k, s in
             {"x": (2, 3, 64), "s": (2, 3, 64), "g": (64,), "b": (64,), "bi": (64,)}.items()
             if k in ins}
    n = h.make_node(op, ins, outs, domain="com.microsoft")
    vi = [h.make_tensor_value_info(k, T.FLOAT16, list(v.shape)) for k, v in feeds.items()]
    ov = [h.make_value_info(o, h.make_empty_tensor_value_info(o).type) for o in outs]
    m = h.make_model(h.make_graph([n], "g", vi, ov), ir_version=8,
                     opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])
    want = run_ort(m, feeds)
    for backend in ("numpy", "jax"):
        got = ig.load(m).run(feeds, backend=backend)
        for k, w in want.items():
            g = np.asarray(got[k])
            assert g.dtype == w.dtype and g.shape == w.shape, (backend, k)
            tol = dict(rtol=1e-3, atol=1e-3) if w.dtype == np.float16 else TOL
            np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32), **tol,
                                       err_msg=f"{backend} {k}")
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    for (k, w), g in zip(want.items(), run_ov(xml, feeds)):
        assert g.dtype == w.dtype and g.shape == w.shape, ("ir", k)
        tol = dict(rtol=1e-3, atol=1e-3) if w.dtype == np.float16 else TOL
        np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32), **tol,
                                   err_msg=f"ir {k}")


@pytest.mark.parametrize("unidirectional", [0, 1])
def test_attention_float16(tmp_path, unidirectional):
    """A float16 ``Attention`` (what ``convert_float_to_float16`` leaves in a fused BERT or
    GPT-2): ONNX Runtime casts it to float32 around its CPU kernel; both backends and the
    OpenVINO IR (float32 inside, float16 out) within one float16 ulp."""
    from onnx import TensorProto as T

    rng = np.random.default_rng(12)
    feeds = {"x": rng.standard_normal((2, 3, 16)).astype(np.float16),
             "mask": np.array([[1, 1, 1], [1, 1, 0]], np.int32)}
    consts = {"w": (0.3 * rng.standard_normal((16, 48))).astype(np.float16),
              "bias": (0.1 * rng.standard_normal(48)).astype(np.float16)}
    n = h.make_node("Attention", ["x", "w", "bias", "mask"], ["y"], domain="com.microsoft",
                    num_heads=2, unidirectional=unidirectional)
    vi = [h.make_tensor_value_info("x", T.FLOAT16, [2, 3, 16]),
          h.make_tensor_value_info("mask", T.INT32, [2, 3])]
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    m = h.make_model(h.make_graph([n], "g", vi, [h.make_tensor_value_info("y", T.FLOAT16, None)],
                                  inits), ir_version=8,
                     opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])
    want = run_ort(m, feeds)["y"].astype(np.float32)
    xml = tmp_path / "m.xml"
    ig.load(m).save(xml)
    got = {b: ig.load(m).run(feeds, backend=b)["y"] for b in ("numpy", "jax")}
    got["ir"] = run_ov(xml, feeds)[0]
    for where_, g in got.items():
        assert g.dtype == np.float16 and g.shape == want.shape, where_
        np.testing.assert_allclose(g.astype(np.float32), want, rtol=1e-3, atol=1e-3,
                                   err_msg=where_)


def test_gpt2_block_with_past(tmp_path):
    """A GPT-2 decoder block as ORT's transformer optimizer writes it, one generation step
    with a past: LayerNormalization, Attention (unidirectional, 2-D mask, past -> present),
    MatMul + SkipLayerNormalization (bias, the residual sum as output 3), MatMul, FastGelu
    (bias), MatMul and the residual Add."""
    H, heads, past_len, seq = 32, 4, 5, 1
    consts = {"ln_g": f(H), "ln_b": f(H), "qkv_w": f(H, 3 * H, s=0.3), "qkv_b": f(3 * H),
              "proj_w": f(H, H, s=0.3), "proj_b": f(H), "ln2_g": f(H), "ln2_b": f(H),
              "fc_w": f(H, 4 * H, s=0.3), "fc_b": f(4 * H), "out_w": f(4 * H, H, s=0.3)}
    mask = np.ones((2, past_len + seq), np.int32)
    mask[1, :2] = 0  # the second sequence left-padded
    feeds = {"x": f(2, seq, H), "past": f(2, 2, heads, past_len, H // heads), "mask": mask}
    nodes = [
        h.make_node("LayerNormalization", ["x", "ln_g", "ln_b"], ["ln"], epsilon=1e-5),
        node("Attention", ["ln", "qkv_w", "qkv_b", "mask", "past"], ["att", "present"],
             num_heads=heads, unidirectional=1),
        h.make_node("MatMul", ["att", "proj_w"], ["proj"]),
        node("SkipLayerNormalization", ["proj", "x", "ln2_g", "ln2_b", "proj_b"],
             ["ln2", "", "", "res"], epsilon=1e-5),
        h.make_node("MatMul", ["ln2", "fc_w"], ["fc"]),
        node("FastGelu", ["fc", "fc_b"], ["act"]),
        h.make_node("MatMul", ["act", "out_w"], ["mlp"]),
        h.make_node("Add", ["mlp", "res"], ["y"]),
    ]
    m = ms_model(nodes, feeds, consts, ["y", "present"])
    check(m, feeds, tmp_path, **TOL)


# ---------------------------------------------------------------------- MultiHeadAttention

_MHA_T = 5


def _mha_case(case: str):
    """Feeds and inputs of the MultiHeadAttention forms of ORT's BART / T5 / Whisper fusions
    (more against ORT alone in tests/generation/test_multi_head_attention.py)."""
    H = D // N
    mask = np.ones((B, _MHA_T), np.int32)
    mask[0, :2] = 0
    feeds = {"q": f(B, S, D)}
    if case == "cross_bnsh":
        feeds.update(k=f(B, N, _MHA_T, H), v=f(B, N, _MHA_T, H), m=mask)
        return feeds, ["q", "k", "v", "", "m"], ["y"], {"scale": 1.0}
    feeds.update(k=f(B, S, D), v=f(B, S, D))
    if case == "bias_bias":
        feeds.update(b=f(3 * D), ab=f(1, N, S, S))
        return feeds, ["q", "k", "v", "b", "", "ab"], ["y"], {}
    feeds.update(pk=f(B, N, P, H), pv=f(B, N, P, H))
    pm = np.ones((B, P + S), np.int32)
    pm[1, :3] = 0
    feeds["m"] = pm
    return (feeds, ["q", "k", "v", "", "m", "", "pk", "pv"], ["y", "pk_out", "pv_out"],
            {"unidirectional": 1} if case == "past_causal" else {"mask_filter_value": -1e9})


@pytest.mark.parametrize("case", ["cross_bnsh", "bias_bias", "past", "past_causal"])
def test_multi_head_attention(tmp_path, case):
    feeds, ins, outs, attrs = _mha_case(case)
    m = one_node("MultiHeadAttention", feeds, ins, outs, num_heads=N, **attrs)
    check(m, {k: feeds[k] for k in ins if k}, tmp_path, **TOL)
