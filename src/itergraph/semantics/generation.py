"""Facts of ONNX Runtime's generation operators (``com.microsoft`` GreedySearch, BeamSearch,
Sampling) shared by the NumPy kernels (`backends.numpy.kernels.gen_greedy`, `gen_beam`) and
the ``lower-generation`` pass: the attributes ORT requires, the inputs it refuses and its
limits. Written once here so that the kernel and the lowered model refuse alike."""

from __future__ import annotations

import numpy as np

from ..errors import InputError, ModelError, where

#: ONNX Runtime's generation operators (domain ``com.microsoft``): each a loop over the tokens
OPS = frozenset({"GreedySearch", "BeamSearch", "Sampling"})

#: ONNX Runtime's limits on BeamSearch's inputs (``kMaxSequenceLength``, ``kMaxNumBeams``)
MAX_LENGTH_LIMIT, MAX_BEAMS = 4096, 128


#: the inputs ONNX Runtime requires of a decoder-only (``model_type`` 0) node: it refuses the
#: model, or the run, without them (``CheckScalarInput(..., required)``, the schema)
REQUIRED_INPUTS = {"GreedySearch": ("max_length",),
                   "BeamSearch": ("max_length", "min_length", "num_beams",
                                  "num_return_sequences", "length_penalty")}


def required_inputs(node, names) -> None:
    """A `ModelError` naming the first of `REQUIRED_INPUTS` that `node` (inputs named
    `names` in order) lacks."""
    for i, name in enumerate(names):
        if name in REQUIRED_INPUTS.get(node.op_type, ()) and (
                i >= len(node.inputs) or node.inputs[i] is None):
            raise ModelError(f"{where(node)}: input '{name}' is required (ONNX Runtime "
                             f"refuses the node without it)")


def _scalar(x, default):
    return default if x is None else np.asarray(x).reshape(-1)[0].item()


def required_token_ids(node):
    """``(eos_token_id, pad_token_id)``: both required by ONNX Runtime's schema (it refuses
    the model without them), so a `ModelError` here rather than a default of our own."""
    a = node.attrs
    for name in ("eos_token_id", "pad_token_id"):
        if name not in a:
            raise ModelError(f"{where(node)}: required attribute '{name}' is missing "
                             f"(ONNX Runtime refuses the model)")
    return int(a["eos_token_id"]), int(a["pad_token_id"])


def check_inputs(node, a, *, beam: bool) -> None:
    """ONNX Runtime's refusals of the run's inputs (``BeamSearchParameters::ParseFromInputs``,
    ``GreedySearchParameters``, ``GenerateBase::CheckInputsImpl``) as an `InputError` naming
    the input; those needing the vocabulary size are `check_vocab`'s. `a`: the named inputs
    (`split_args`). The prompt against max_length is `prompt`'s."""
    ids = np.asarray(a["input_ids"])
    if ids.ndim != 2:
        raise InputError(f"{where(node)}: input 'input_ids' must have 2 dimensions, got "
                         f"{ids.ndim}")
    ml = int(_scalar(a.get("max_length"), 0))
    if a.get("max_length") is not None and ids.shape[1] >= ml:
        raise InputError(f"{where(node)}: input_ids length {ids.shape[1]} must be below "
                         f"max_length {ml}")
    if a.get("max_length") is not None and beam:
        if ml > MAX_LENGTH_LIMIT:
            raise InputError(f"{where(node)}: max_length {ml} is above ONNX Runtime's limit "
                             f"{MAX_LENGTH_LIMIT}")
    if beam:
        k = int(_scalar(a.get("num_beams"), 1))
        if not 1 <= k <= MAX_BEAMS:
            raise InputError(f"{where(node)}: num_beams {k} must be in [1, {MAX_BEAMS}]")
        nr = int(_scalar(a.get("num_return_sequences"), 1))
        if not 1 <= nr <= k:
            raise InputError(f"{where(node)}: num_return_sequences {nr} must be in [1, "
                             f"num_beams={k}]")
    rp = float(_scalar(a.get("repetition_penalty"), 1.0))
    if not rp > 0.0:
        raise InputError(f"{where(node)}: repetition_penalty must be greater than 0, got {rp}")
    m = a.get("attention_mask")
    if m is not None and np.shape(m) != ids.shape:
        raise InputError(f"{where(node)}: input 'attention_mask' has shape {np.shape(m)}, "
                         f"expected input_ids' {ids.shape}")
    pm = a.get("prefix_vocab_mask")
    if pm is not None and (np.ndim(pm) != 2 or np.shape(pm)[0] != ids.shape[0]):
        raise InputError(f"{where(node)}: input 'prefix_vocab_mask' has shape {np.shape(pm)}, "
                         f"expected [batch={ids.shape[0]}, vocab]")
    vm = a.get("vocab_mask")
    if vm is not None and np.ndim(vm) != 1:
        raise InputError(f"{where(node)}: input 'vocab_mask' must have 1 dimension, got "
                         f"{np.ndim(vm)}")


def check_vocab(node, a, vocab: int) -> None:
    """`check_inputs`'s refusals that need the vocabulary size (the logits' width)."""
    for name, axis in (("vocab_mask", 0), ("prefix_vocab_mask", 1)):
        v = a.get(name)
        if v is not None and np.shape(v)[axis] != vocab:
            raise InputError(f"{where(node)}: input '{name}' has shape {np.shape(v)}, its "
                             f"dimension {axis} must be the vocabulary size {vocab}")


#: why a negative ``seed`` is refused (NumPy's generator, which draws the tokens, refuses it)
NEGATIVE_SEED = "input 'seed' must not be negative"


def check_seed(element: str, seed) -> None:
    """An `InputError` naming `element` (a node's `where`) for a negative ``seed``."""
    s = int(_scalar(seed, 0))
    if s < 0:
        raise InputError(f"{element}: {NEGATIVE_SEED}, got {s}")


def sampling_uniforms(seed, steps: int, rows: int) -> np.ndarray:
    """The uniform numbers ``Sampling`` draws its tokens with: ``[steps, rows]`` float64 from
    NumPy's generator seeded by `seed` (a one-element input; absent or 0: fresh entropy,
    a new draw every call), in the order of the draws, step by step and row by row. itergraph
    does not reproduce ONNX Runtime's generator (module docstring of
    `backends.numpy.kernels.gen_sampling`)."""
    s = max(int(_scalar(seed, 0)), 0)  # negative: refused by `check_seed` first
    return np.random.default_rng(s or None).random((max(int(steps), 0), int(rows)))


def draw(scores: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Each row's token drawn from ``softmax(scores)`` [rows, vocab] with its uniform `u`
    [rows], as NumPy's ``Generator.choice(vocab, p=...)`` draws it: the first token whose
    cumulative probability (normalised by the last) is above ``u``, in float64."""
    s = np.asarray(scores, np.float64)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    return (cdf <= np.asarray(u, np.float64)[:, None]).sum(axis=1)
