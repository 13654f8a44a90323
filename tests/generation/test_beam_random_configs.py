"""A seeded random differential check of ONNX Runtime's BeamSearch and GreedySearch
(``model_type`` 0) against itergraph: the NumPy kernel, the ``lower-generation`` model on
NumPy, and the form the JAX backend compiles (the prompt read through the loop's step) on
NumPy. Unusual configurations on purpose: random pad / eos ids (eos == pad too), attention
masks with zeros (left padding, zeros inside, a masked last token), min_length above
max_length, negative / zero length_penalty, repetition_penalty, no_repeat_ngram_size, vocab
and prefix masks, batch > 1.

Where ORT refuses the inputs, itergraph must refuse with an ``itergraph.Error`` (never return
values); where ORT runs, the sequences must be equal and the scores close. Where ORT's output
is not determined by the inputs (GreedySearch's tail after every row met eos: its buffer is
left unwritten), only the written part is compared.

``ITERGRAPH_GEN_RANDOM=N`` runs N configurations of each op (default: a few), seeds from
``ITERGRAPH_GEN_SEED`` (default 1000) on; by hand::

    ITERGRAPH_GEN_RANDOM=300 PYTHONPATH=src python -m pytest \
        tests/generation/test_beam_random_configs.py
    PYTHONPATH=src python tests/generation/test_beam_random_configs.py 300   # a tally
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import itergraph as ig

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
import generation_models  # noqa: E402
from models import VOCAB, generation_model  # noqa: E402

from itergraph.backends.numpy import compile_graph as numpy_compile  # noqa: E402
from itergraph.backends.numpy import run_plan  # noqa: E402
from itergraph.frontends.onnx import read  # noqa: E402
from itergraph.passes.lower_generation import lower_generation_stepwise  # noqa: E402
from itergraph.semantics.generation import MAX_BEAMS, MAX_LENGTH_LIMIT  # noqa: E402

ort = pytest.importorskip("onnxruntime")

I32, F32 = np.int32, np.float32
N = int(os.environ.get("ITERGRAPH_GEN_RANDOM", "12"))
SEED0 = int(os.environ.get("ITERGRAPH_GEN_SEED", "1000"))


def _mask(rng, B, S):
    kind = rng.choice(["left", "inside", "last", "all_zero_row", "ones"])
    m = np.ones((B, S), I32)
    for b in range(B):
        if kind == "left":
            m[b, :rng.integers(0, S)] = 0
        elif kind == "inside":
            m[b, rng.random(S) < 0.4] = 0
        elif kind == "last":
            m[b, -1] = 0
        elif kind == "all_zero_row" and b == 0:
            m[b] = 0
    return m


def config(seed: int, op: str):
    """``(model, feeds, description)`` of one random configuration."""
    rng = np.random.default_rng(seed)
    B, S = int(rng.integers(1, 4)), int(rng.integers(1, 6))
    pad = int(rng.integers(0, VOCAB))
    eos = pad if rng.random() < 0.2 else int(rng.integers(0, VOCAB))
    attrs = {"pad_token_id": pad, "eos_token_id": eos}
    if rng.random() < 0.4:
        attrs["no_repeat_ngram_size"] = int(rng.integers(1, 4))
    if op == "BeamSearch":
        if rng.random() < 0.5:
            attrs["early_stopping"] = int(rng.integers(0, 2))
        if rng.random() < 0.2:
            attrs["decoder_start_token_id"] = int(rng.integers(0, VOCAB))
    ids = rng.integers(0, VOCAB, (B, S)).astype(I32)
    if rng.random() < 0.3:  # left padding by pad tokens (no mask: ORT masks ids == pad)
        for b in range(B):
            ids[b, :rng.integers(0, S)] = pad
    max_length = S + int(rng.integers(1, 9)) if rng.random() < 0.95 else S
    feeds = {"input_ids": ids, "max_length": np.array([max_length], I32)}
    r = rng.random()
    min_length = (0 if r < 0.3 else int(rng.integers(1, max_length + 1)) if r < 0.75
                  else max_length + int(rng.integers(0, 4)))
    if op == "BeamSearch" or rng.random() < 0.7:
        feeds["min_length"] = np.array([min_length], I32)
    if op == "BeamSearch":
        K = int(rng.integers(1, 5))
        nr = int(rng.integers(1, K + 1)) if rng.random() < 0.95 else int(rng.choice([0, K + 1]))
        lp = float(rng.choice([1.0, 0.0, -0.5, -1.5, 0.3, 2.0, 1.0]))
        feeds.update(num_beams=np.array([K], I32), num_return_sequences=np.array([nr], I32),
                     length_penalty=np.array([lp], F32))
    if rng.random() < 0.4:
        feeds["repetition_penalty"] = np.array([rng.choice([1.0, 0.7, 1.5, 2.5])], F32)
    if rng.random() < 0.3:  # now and then all but a few tokens masked (ties among them)
        feeds["vocab_mask"] = (rng.random(VOCAB) > rng.choice([0.3, 0.9])).astype(I32)
    if rng.random() < 0.3:
        feeds["prefix_vocab_mask"] = (rng.random((B, VOCAB)) > 0.5).astype(I32)
    if rng.random() < 0.5:
        feeds["attention_mask"] = _mask(rng, B, S)
    order = ["input_ids", "max_length", "min_length", "num_beams", "num_return_sequences",
             "length_penalty", "repetition_penalty", "vocab_mask", "prefix_vocab_mask",
             "attention_mask"]
    feeds = {k: feeds[k] for k in order if k in feeds}
    # now and then an input or attribute ORT refuses
    bad = rng.choice(["", "rp", "beams", "max_length", "mask_shape", "prefix_batch",
                      "vocab_len", "no_pad", "no_eos"], p=[0.84] + [0.02] * 8)
    if bad == "rp":
        feeds["repetition_penalty"] = np.array([rng.choice([0.0, -1.0])], F32)
    elif bad == "beams" and op == "BeamSearch":
        feeds["num_beams"] = np.array([rng.choice([0, -1, MAX_BEAMS + 1])], I32)
    elif bad == "max_length" and op == "BeamSearch":
        feeds["max_length"] = np.array([MAX_LENGTH_LIMIT + 1], I32)
    elif bad == "mask_shape" and "attention_mask" in feeds:
        feeds["attention_mask"] = np.ones((B, S + 1), I32)
    elif bad == "prefix_batch" and "prefix_vocab_mask" in feeds:
        feeds["prefix_vocab_mask"] = np.ones((B + 1, VOCAB), I32)
    elif bad == "vocab_len" and "vocab_mask" in feeds:
        feeds["vocab_mask"] = np.ones(VOCAB - 1, I32)
    elif bad in ("no_pad", "no_eos"):
        del attrs["pad_token_id" if bad == "no_pad" else "eos_token_id"]
    model = generation_model(op, [k for k in feeds if k != "input_ids"], **attrs)
    if rng.random() < 0.3:  # a decoder of ORT's fused ops that reads the attention mask
        dec = next(a for a in model.graph.node[0].attribute if a.name == "decoder")
        dec.g.CopyFrom(generation_models.fused_decoder(VOCAB, 16, 2, layers=1,
                                                       seed=int(rng.integers(0, 9))))
    for name in ("pad_token_id", "eos_token_id"):  # generation_model's defaults undone
        if name not in attrs:
            node = model.graph.node[0]
            node.attribute.remove(next(x for x in node.attribute if x.name == name))
    desc = {**attrs, **{k: (v.tolist() if v.size < 8 else v.tolist())
                        for k, v in feeds.items()}}
    return model, feeds, desc


def _ort_run(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _stepwise(model, feeds):
    """The form the JAX backend compiles (the prompt read through the loop's step where the
    decoder is provably causal), run on NumPy."""
    g = read(model)
    lower_generation_stepwise(g)
    return run_plan(numpy_compile(g), feeds)


def _ig_runs(model, feeds):
    """``{"kernel": outputs or Error, "lowered": ..., "stepwise": ...}``"""
    out = {}
    for name, run in (("kernel", lambda: ig.load(model).run(feeds)),
                      ("lowered", lambda: ig.optimize(model, ["lower-generation"]).run(feeds)),
                      ("stepwise", lambda: _stepwise(model, feeds))):
        try:
            res = run()
            out[name] = [res["sequences"]] + ([res["sequences_scores"]]
                                              if "sequences_scores" in res else [])
        except Exception as e:  # noqa: BLE001 (anything but an ig.Error is a finding)
            out[name] = e
    return out


def _few_allowed(feeds) -> bool:
    """Whether vocab_mask and prefix_vocab_mask leave some row fewer than 2 * num_beams
    tokens."""
    allowed = np.ones((feeds["input_ids"].shape[0], VOCAB), bool)
    if "vocab_mask" in feeds and np.size(feeds["vocab_mask"]) == VOCAB:
        allowed &= np.asarray(feeds["vocab_mask"]).astype(bool)[None]
    pm = feeds.get("prefix_vocab_mask")
    if pm is not None and np.shape(pm) == allowed.shape:
        allowed &= np.asarray(pm).astype(bool)
    return int(allowed.sum(axis=1).min()) < 2 * int(feeds["num_beams"][0])


def _tie_order(got, want) -> bool:
    """BeamSearch: the same returned (score, sequence) pairs per batch entry, ordered
    otherwise only among hypotheses of exactly equal score (ORT's order of tied hypotheses
    is its sort's, not reproduced; see docs/generation.md)."""
    for gs, gq, ws, wq in zip(got[1], got[0], want[1], want[0]):
        if not np.array_equal(gs, ws):
            return False
        if sorted(map(tuple, gq.tolist())) != sorted(map(tuple, wq.tolist())):
            return False
        for i in range(len(ws)):
            if not np.array_equal(gq[i], wq[i]) and (ws == ws[i]).sum() < 2:
                return False
    return True


NAMES = ("num_return_sequences", "num_beams", "max_length", "repetition_penalty",
         "prefix_vocab_mask", "vocab_mask", "attention_mask", "pad_token_id", "eos_token_id")


def _named(msg: str) -> str | None:
    """The input or attribute ORT's refusal names (the first it mentions)."""
    if "Required attribute '" in msg:
        return msg.split("Required attribute '")[1].split("'")[0]
    msg = msg.split("Status Message:")[-1]
    at = {n: msg.find(n) for n in NAMES if n in msg}
    return min(at, key=at.get) if at else None


def compare(op: str, seed: int) -> tuple[str, str]:
    """``(verdict, detail)``: verdict ``ok``, ``both_refuse`` or ``DIFF`` / ``SILENT``."""
    model, feeds, desc = config(seed, op)
    try:
        want = _ort_run(model, feeds)
    except Exception as e:  # noqa: BLE001 (ORT's own error classes)
        want = e
    got = _ig_runs(model, feeds)
    problems, ties = [], []
    for name, g in got.items():
        if isinstance(want, Exception):
            if not isinstance(g, ig.Error):
                problems.append(f"{name}: ORT refuses ({str(want)[-300:]}) but itergraph "
                                f"gives {type(g).__name__}: {str(g)[:200]}")
            elif name == "kernel":
                named = _named(str(want))
                if named and named not in str(g):
                    problems.append(f"kernel: refuses without naming '{named}': {g}")
            continue
        if isinstance(g, Exception):
            problems.append(f"{name}: itergraph refuses ({type(g).__name__}: {g}) where ORT "
                            f"runs")
            continue
        seqs, wseqs = np.asarray(g[0]), np.asarray(want[0])
        if seqs.shape != wseqs.shape:
            problems.append(f"{name}: shape {seqs.shape} != {wseqs.shape}")
            continue
        if op == "GreedySearch":
            pad = desc["pad_token_id"]
            # ORT leaves the tail unwritten once every row met eos (see module docstring)
            gen = seqs.shape[1]
            while gen > feeds["input_ids"].shape[1] and (seqs[:, gen - 1] == pad).all():
                gen -= 1
            seqs, wseqs = seqs[:, :gen], wseqs[:, :gen]
        if not np.array_equal(seqs, wseqs) and len(want) > 1 and _tie_order(g, want):
            ties.append(name)
        elif not np.array_equal(seqs, wseqs):
            problems.append(f"{name}: sequences\n{seqs}\n!= ORT\n{wseqs}")
        elif len(want) > 1 and not np.allclose(g[1], want[1], rtol=1e-4, atol=1e-5):
            problems.append(f"{name}: scores {g[1].tolist()} != ORT {want[1].tolist()}")
    if not problems:
        return ("both_refuse" if isinstance(want, Exception) else
                "tie_order" if ties else "ok"), ""
    if op == "BeamSearch" and _few_allowed(feeds):
        # KNOWN, not fixed: fewer allowed tokens than 2 * num_beams candidates; the masked
        # ones tie at float32's lowest (-inf once the beam scores are added) and ORT's TopK
        # picks among them in its own order (docs/generation.md)
        return "masked_ties", f"{op} seed {seed} {desc}\n" + "\n".join(problems)
    return "DIFF", f"{op} seed {seed} {desc}\n" + "\n".join(problems)


@pytest.mark.parametrize("seed", range(N))
@pytest.mark.parametrize("op", ["BeamSearch", "GreedySearch"])
def test_random_config_matches_ort(op, seed):
    verdict, detail = compare(op, SEED0 + seed)
    if verdict == "masked_ties":
        pytest.xfail("known: ORT's order among masked candidates that tie\n" + detail)
    assert verdict != "DIFF", detail


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    ops = sys.argv[2:] or ["BeamSearch", "GreedySearch"]
    for op in ops:
        tally: dict[str, int] = {}
        for s in range(n):
            v, d = compare(op, SEED0 + s)
            tally[v] = tally.get(v, 0) + 1
            if d and v == "DIFF":
                print(d, "\n")
        print(op, tally, flush=True)


# -- the causes found, one case each ------------------------------------------------------------

def _both(op, feeds, **attrs):
    model = generation_model(op, [k for k in feeds if k != "input_ids"], **attrs)
    return model, _ort_run(model, feeds), _ig_runs(model, feeds)


def _beam_feeds(**kw):
    f = {"input_ids": np.array([[3, 4, 5], [6, 7, 8]], I32), "max_length": np.array([9], I32),
         "min_length": np.array([0], I32), "num_beams": np.array([3], I32),
         "num_return_sequences": np.array([2], I32), "length_penalty": np.array([1.0], F32)}
    f.update(kw)
    return f


@pytest.mark.parametrize("op", ["BeamSearch", "GreedySearch"])
@pytest.mark.parametrize("mask", [[[1, 1, 0], [1, 1, 1]], [[1, 0, 1], [0, 0, 0]]])
def test_positions_count_the_ids_not_the_mask(op, mask):
    """ORT numbers the prompt's positions by the tokens that are not pad_token_id, whatever
    the attention mask says, and puts the second step at that count (its sequence_lengths):
    with a mask zero at the last token, or zeros where the ids are not pad, itergraph gave
    other positions (other tokens)."""
    feeds = _beam_feeds(attention_mask=np.array(mask, I32))
    if op == "GreedySearch":
        feeds = {k: feeds[k] for k in ("input_ids", "max_length", "attention_mask")}
    _, want, got = _both(op, feeds, pad_token_id=5, eos_token_id=1)
    for name, g in got.items():
        np.testing.assert_array_equal(g[0], want[0], err_msg=name)
        if op == "BeamSearch":
            np.testing.assert_allclose(g[1], want[1], rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("op", ["BeamSearch", "GreedySearch"])
def test_pad_tokens_inside_the_prompt_without_a_mask(op):
    feeds = _beam_feeds(input_ids=np.array([[3, 0, 5], [0, 7, 0]], I32))
    if op == "GreedySearch":
        feeds = {k: feeds[k] for k in ("input_ids", "max_length")}
    _, want, got = _both(op, feeds, pad_token_id=0, eos_token_id=1)
    for name, g in got.items():
        np.testing.assert_array_equal(g[0], want[0], err_msg=name)


@pytest.mark.parametrize("change,named", [
    ({"repetition_penalty": np.array([0.0], F32)}, "repetition_penalty"),
    ({"repetition_penalty": np.array([-1.0], F32)}, "repetition_penalty"),
    ({"num_beams": np.array([0], I32)}, "num_beams"),
    ({"num_beams": np.array([129], I32)}, "num_beams"),
    ({"max_length": np.array([4097], I32)}, "max_length"),
    ({"attention_mask": np.ones((2, 4), I32)}, "attention_mask"),
    ({"prefix_vocab_mask": np.ones((3, VOCAB), I32)}, "prefix_vocab_mask"),
    ({"vocab_mask": np.ones(VOCAB - 1, I32)}, "vocab_mask"),
    ({"vocab_mask": np.ones(1, I32)}, "vocab_mask"),
    ({"prefix_vocab_mask": np.ones((2, 1), I32)}, "prefix_vocab_mask"),
])
def test_inputs_ort_refuses_are_refused(change, named):
    """Where ORT refuses the inputs, the kernel refuses naming the input and the lowered
    model fails (it ran them before: silently other values than none)."""
    feeds = _beam_feeds(**change)
    feeds = {k: feeds[k] for k in ["input_ids", "max_length", "min_length", "num_beams",
                                   "num_return_sequences", "length_penalty",
                                   "repetition_penalty", "vocab_mask", "prefix_vocab_mask",
                                   "attention_mask"] if k in feeds}
    model = generation_model("BeamSearch", [k for k in feeds if k != "input_ids"])
    with pytest.raises(Exception, match=named):  # noqa: B017 (ORT's own error class)
        _ort_run(model, feeds)
    with pytest.raises(ig.Error, match=named):
        ig.load(model).run(feeds)
    with pytest.raises(ig.Error):
        ig.optimize(model, ["lower-generation"]).run(feeds)


@pytest.mark.parametrize("op", ["BeamSearch", "GreedySearch"])
@pytest.mark.parametrize("attr", ["pad_token_id", "eos_token_id"])
def test_missing_token_id_attribute_refused(op, attr):
    """ORT's schema requires eos_token_id and pad_token_id; itergraph used defaults of its
    own (pad 0: the prompt's zeros then counted as padding)."""
    feeds = _beam_feeds()
    if op == "GreedySearch":
        feeds = {k: feeds[k] for k in ("input_ids", "max_length")}
    model = generation_model(op, [k for k in feeds if k != "input_ids"])
    node = model.graph.node[0]
    node.attribute.remove(next(a for a in node.attribute if a.name == attr))
    with pytest.raises(Exception, match=attr):  # noqa: B017
        _ort_run(model, feeds)
    with pytest.raises(ig.ModelError, match=attr):
        ig.load(model).run(feeds)
    with pytest.raises(ig.Error, match=attr):
        ig.optimize(model, ["lower-generation"])


@pytest.mark.parametrize("op,drop", [("BeamSearch", "min_length"), ("BeamSearch", "num_beams"),
                                     ("BeamSearch", "num_return_sequences"),
                                     ("BeamSearch", "length_penalty"),
                                     ("GreedySearch", "max_length")])
def test_missing_required_input_refused(op, drop):
    """ORT refuses BeamSearch without max_length .. length_penalty (GreedySearch without
    max_length); itergraph ran some of them with defaults of its own."""
    feeds = {k: v for k, v in _beam_feeds().items() if k != drop}
    if op == "GreedySearch":
        feeds = {k: feeds[k] for k in ("input_ids", "min_length")}
    model = generation_model(op, [k for k in feeds if k != "input_ids"])
    with pytest.raises(Exception):  # noqa: B017 (ORT's own error class)
        _ort_run(model, feeds)
    with pytest.raises(ig.Error, match=drop):
        ig.load(model).run(feeds)
    with pytest.raises(ig.Error, match=drop):
        ig.optimize(model, ["lower-generation"])
