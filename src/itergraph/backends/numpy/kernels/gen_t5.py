"""ONNX Runtime's ``com.microsoft.BeamSearch`` for encoder-decoder models (``model_type`` 1,
the T5 contract of ``convert_generation``; ORT's ``beam_search_impl_t5.h``,
``subgraph_t5_encoder.cc``, ``subgraph_t5_decoder.cc``): the steps that `gen_beam`'s beam
loop runs.

The ``encoder`` attribute takes ``encoder_input_ids, encoder_attention_mask`` and, in the
legacy form that holds the first decoder step, ``decoder_input_ids``; it returns either
``logits, encoder_hidden_states, present_key_self_*, present_value_self_*,
present_key_cross_*, present_value_cross_*`` (legacy) or the cross keys and values only.
The ``decoder`` takes ``input_ids, encoder_attention_mask, [encoder_hidden_states],
past_key_self_*, past_value_self_*, ..., past_key_cross_*, past_value_cross_*`` and returns
``logits, present_key_self_*, present_value_self_*, ...``. As a plain Python loop::

    mask = attention_mask or 0 on the leading pad tokens of input_ids, 1 elsewhere
    outs = encoder(input_ids, mask[, full((B, 1), decoder_start_token_id)])  # batch B
    every output and the mask repeated num_beams times along the batch
    seqs = [[decoder_start_token_id]] * (B * num_beams)
    first logits: the encoder's (legacy), else decoder(start tokens, mask, empty self pasts,
        cross)
    each step: the beam step of gen_beam; the self pasts reordered by the chosen beams, the
        cross pasts (and encoder_hidden_states) passed unchanged;
        decoder(tokens [or the whole seqs when its input_ids is not [B, 1]], mask, ...)
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, UnsupportedError, where
from ....ir import Node
from ..plan import CompileContext
from .gen_greedy import Subgraph, check_attrs


def _names(vals):
    return [v.name for v in vals]


def _contract(node: Node):
    """Check the subgraphs' names as ORT does; ``(legacy, hidden, layers, seq_ids)``."""
    enc, dec = node.attrs.get("encoder"), node.attrs.get("decoder")
    if enc is None or dec is None:
        raise UnsupportedError(f"{where(node)}: model_type 1 needs 'encoder' and 'decoder' "
                               f"graph attributes")
    ei, eo, di, do = _names(enc.inputs), _names(enc.outputs), _names(dec.inputs), \
        _names(dec.outputs)
    legacy = bool(eo) and eo[0] == "logits"
    want_in = ["encoder_input_ids", "encoder_attention_mask"] + \
        (["decoder_input_ids"] if legacy else [])
    if ei != want_in:
        raise UnsupportedError(f"{where(node)}: encoder inputs {ei}, expected {want_in}")
    first = 2 if legacy else 0
    if legacy and eo[1:2] != ["encoder_hidden_states"]:
        raise UnsupportedError(f"{where(node)}: encoder output 1 is {eo[1:2]}, expected "
                               f"encoder_hidden_states")
    hidden = len(di) > 2 and di[2] == "encoder_hidden_states"
    fp = 3 if hidden else 2
    if di[:2] != ["input_ids", "encoder_attention_mask"] or (len(di) - fp) % 4 or \
            len(di) - fp < 4:
        raise UnsupportedError(f"{where(node)}: decoder inputs {di} do not follow the T5 "
                               f"contract (input_ids, encoder_attention_mask, "
                               f"[encoder_hidden_states], past_*_self_*, past_*_cross_*)")
    layers = (len(di) - fp) // 4
    if do[:1] != ["logits"] or len(do) != 1 + 2 * layers:
        raise UnsupportedError(f"{where(node)}: decoder outputs {do}, expected logits and "
                               f"{2 * layers} present_*_self_*")
    n_enc = first + (4 if legacy else 2) * layers
    if len(eo) != n_enc:
        raise UnsupportedError(f"{where(node)}: encoder has {len(eo)} outputs, expected "
                               f"{n_enc} for {layers} layer(s)")
    if hidden and not legacy:
        raise UnsupportedError(f"{where(node)}: the decoder reads encoder_hidden_states, "
                               f"which this encoder does not return")
    shape = getattr(dec.inputs[0].type, "shape", None)
    seq_ids = not (shape is not None and len(shape) == 2 and shape[1] == 1)
    return legacy, hidden, layers, seq_ids


def _leading_pad_mask(ids, pad):
    """ORT's CreateEncoderInputs: 0 only for pad tokens before the first other token."""
    return (np.cumsum(ids != pad, axis=1) > 0).astype(np.int32)


def t5_steps_factory(node: Node, ctx: CompileContext):
    """``steps(outer, ids, K, max_length, pad, mask) -> (first, advance, seqs, B)``."""
    check_attrs(node)
    if "init_decoder" in node.attrs:
        raise UnsupportedError(f"{where(node)}: attribute 'init_decoder' with model_type 1")
    legacy, hidden, layers, seq_ids = _contract(node)
    enc = Subgraph(node, ctx, node.attrs["encoder"])
    dec = Subgraph(node, ctx, node.attrs["decoder"])
    start = int(node.attrs.get("decoder_start_token_id", -1))
    if start < 0:
        raise UnsupportedError(f"{where(node)}: model_type 1 needs decoder_start_token_id >= 0")

    def steps(outer, ids, K, max_length, pad, mask):
        ids = np.asarray(ids).astype(np.int32)
        if ids.ndim != 2:
            raise ExecutionError(f"{where(node)}: input_ids must be [batch, sequence], got "
                                 f"{ids.shape}")
        if max_length < 2:
            raise ExecutionError(f"{where(node)}: max_length {max_length} must be at least 2 "
                                 f"(the decoder start token and one generated token)")
        if legacy and max_length == 2:
            # ORT takes the first token from the legacy encoder's logits only when
            # max_length > 2; at 2 its tokens follow from neither the encoder's logits nor a
            # decoder step on the start token (checked): refused rather than different
            raise UnsupportedError(f"{where(node)}: max_length 2 with an encoder that holds "
                                   f"the first decoder step is not supported")
        B = ids.shape[0]
        mask = _leading_pad_mask(ids, pad) if mask is None else \
            np.asarray(mask).astype(np.int32)
        start_ids = np.full((B, 1), start, np.int32)
        outs = [np.asarray(o) for o in enc.bind(outer)(
            ids, mask, *([start_ids] if legacy else []))]
        rep = [np.repeat(o, K, axis=0) for o in outs]
        R = B * K
        seqs = np.full((R, 1), start, np.int32)
        m = np.repeat(mask, K, axis=0)
        if legacy:
            logits0, hs = rep[0], rep[1]
            self_kv, cross = rep[2:2 + 2 * layers], rep[2 + 2 * layers:]
        else:
            logits0, hs, cross = None, None, rep
            self_kv = [np.zeros((R, c.shape[1], 0, c.shape[3]), c.dtype) for c in cross]
        fixed = [m] + ([hs] if hidden else [])
        st = {"self": self_kv}
        run = dec.bind(outer)

        def call(tokens, seqs):
            step_ids = seqs if seq_ids else tokens[:, None]
            o = run(step_ids.astype(np.int32), *fixed, *st["self"], *cross)
            st["self"] = list(o[1:])
            return o[0]

        def first():
            return logits0 if legacy else call(seqs[:, 0], seqs)

        def advance(ntok, nidx, seqs):
            st["self"] = [p[nidx] for p in st["self"]]
            return call(ntok, seqs)

        return first, advance, seqs, B

    return steps
