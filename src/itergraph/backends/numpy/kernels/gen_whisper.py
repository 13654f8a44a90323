"""ONNX Runtime's ``com.microsoft.BeamSearch`` for Whisper-style models (``model_type`` 2;
ORT's ``beam_search_impl_whisper.h``): the steps that `gen_beam`'s beam loop runs.

The node's first input is float audio features ``[B, feature_size, frames]``, its 11th the
optional ``decoder_input_ids`` ``[B, P]`` (the forced prompt; default one
``decoder_start_token_id`` per row). The ``encoder`` takes ``encoder_input_ids`` (the
features) and ``decoder_input_ids`` and returns ``logits, encoder_hidden_states`` and the
first step's ``present_{key,value}_{self,cross}_*``; the ``decoder`` takes ``input_ids`` and
``past_{key,value}_{self,cross}_*`` and returns ``logits`` and ``present_{key,value}_self_*``.
Pasts are matched to presents by name (ORT's Whisper export interleaves self and cross per
layer). As a plain Python loop::

    outs = encoder(features, prompt)              # batch B, then repeated num_beams times
    seqs = prompt repeated; first logits: the encoder's last position
    each step: the beam step of gen_beam; past_*_self_* <- present_*_self_* reordered by the
        chosen beams; past_*_cross_* fixed;
        decoder(tokens [or the whole seqs when its input_ids is not [B, 1]], *pasts)

Refused: a decoder that also reads ``encoder_hidden_states`` (ORT 1.32's CPU kernel feeds it a
buffer it does not fill: its tokens vary from run to run), the timestamp logits processor,
cross_qk, extra_decoding_ids, temperature, and the encoder form without logits.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, UnsupportedError, where
from ....ir import Node
from ..plan import CompileContext
from .gen_greedy import Subgraph, check_attrs


def _names(vals):
    return [v.name for v in vals]


def whisper_steps_factory(node: Node, ctx: CompileContext):
    """``steps(outer, args, K, max_length, pad) -> (first, advance, seqs, B)``."""
    check_attrs(node)
    enc, dec = node.attrs.get("encoder"), node.attrs.get("decoder")
    if enc is None or dec is None or "init_decoder" in node.attrs:
        raise UnsupportedError(f"{where(node)}: model_type 2 needs 'encoder' and 'decoder' "
                               f"graph attributes (and no init_decoder)")
    ei, eo, di, do = _names(enc.inputs), _names(enc.outputs), _names(dec.inputs), \
        _names(dec.outputs)
    if ei != ["encoder_input_ids", "decoder_input_ids"] or eo[:2] != \
            ["logits", "encoder_hidden_states"]:
        raise UnsupportedError(f"{where(node)}: encoder inputs {ei} / outputs {eo[:2]} do not "
                               f"follow ORT's Whisper contract (encoder_input_ids, "
                               f"decoder_input_ids -> logits, encoder_hidden_states, "
                               f"present_*)")
    if "encoder_hidden_states" in di:
        raise UnsupportedError(f"{where(node)}: a Whisper decoder reading "
                               f"encoder_hidden_states is not supported (ONNX Runtime feeds "
                               f"it undefined values)")
    pasts = di[1:]
    if di[:1] != ["input_ids"] or not pasts or do[:1] != ["logits"]:
        raise UnsupportedError(f"{where(node)}: decoder inputs {di} / outputs {do} do not "
                               f"follow ORT's Whisper contract")
    src = {}
    for p in pasts:
        want = "present_" + p[len("past_"):]
        if not p.startswith("past_") or (want not in eo) or \
                ("_self_" in p and want not in do):
            raise UnsupportedError(f"{where(node)}: decoder input '{p}' has no matching "
                                   f"present_* output")
        src[p] = want
    if set(do[1:]) != {src[p] for p in pasts if "_self_" in p}:
        raise UnsupportedError(f"{where(node)}: decoder outputs {do[1:]} are not the "
                               f"present_*_self_* of its pasts")
    shape = getattr(dec.inputs[0].type, "shape", None)
    seq_ids = not (shape is not None and len(shape) == 2 and shape[1] == 1)
    encoder, decoder = Subgraph(node, ctx, enc), Subgraph(node, ctx, dec)
    start = int(node.attrs.get("decoder_start_token_id", -1))

    def steps(outer, a, K, max_length, pad):
        for name in ("logits_processor", "cross_qk_layer_head", "extra_decoding_ids",
                     "temperature", "attention_mask"):
            if a.get(name) is not None:
                raise UnsupportedError(f"{where(node)}: input '{name}' is not supported "
                                       f"with model_type 2")
        feats = np.asarray(a["input_ids"])
        if feats.ndim != 3:
            raise ExecutionError(f"{where(node)}: input_features must be [batch, "
                                 f"feature_size, frames], got {feats.shape}")
        B = feats.shape[0]
        prompt = a.get("decoder_input_ids")
        if prompt is None:
            if start < 0:
                raise UnsupportedError(f"{where(node)}: no decoder_input_ids and no "
                                       f"decoder_start_token_id")
            prompt = np.full((B, 1), start, np.int32)
        prompt = np.asarray(prompt).astype(np.int32)
        if prompt.ndim != 2 or prompt.shape[0] != B:
            raise ExecutionError(f"{where(node)}: decoder_input_ids must be [batch, P], got "
                                 f"{prompt.shape}")
        if prompt.shape[1] + 1 >= max_length:
            raise UnsupportedError(f"{where(node)}: max_length {max_length} must exceed the "
                                   f"decoder prompt length {prompt.shape[1]} by 2 or more "
                                   f"(ORT runs the encoder's first step only then)")
        outs = dict(zip(eo, (np.repeat(np.asarray(o), K, axis=0)
                             for o in encoder.bind(outer)(feats, prompt))))
        seqs = np.repeat(prompt, K, axis=0)
        st = {p: outs[src[p]] for p in pasts}
        run = decoder.bind(outer)

        def advance(ntok, nidx, seqs):
            for p in pasts:
                if "_self_" in p:
                    st[p] = st[p][nidx]
            step_ids = seqs if seq_ids else ntok[:, None]
            o = run(step_ids.astype(np.int32), *(st[p] for p in pasts))
            got = dict(zip(do, o))
            for p in pasts:
                if "_self_" in p:
                    st[p] = got[src[p]]
            return got["logits"]

        return (lambda: outs["logits"]), advance, seqs, B

    return steps
