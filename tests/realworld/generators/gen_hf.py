"""Hugging Face ``transformers`` architectures exported by ``torch.onnx`` (sources ``hf``: the
TorchScript exporter, ``hf-dynamo``: the dynamo exporter).

Run by hand from the repository root, in the environment of ``gen_torch.py`` plus
``pip install transformers`` (README.md)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_hf.py

Every model is built from a tiny configuration with random weights (seeded; nothing is
downloaded): text encoders (BERT, RoBERTa, ALBERT, ELECTRA, DistilBERT, DeBERTa-v2, MPNet,
XLM-RoBERTa), decoders with a causal mask and learned or rotary positions (GPT-2, Llama,
Mistral, Qwen2, Qwen3 (query/key norms), Phi, GPT-NeoX, OPT, BLOOM's ALiBi, Gemma, Falcon,
GPT-J, CodeGen, StableLM, GPT-BigCode), encoder-decoders (T5, BART, Pegasus, Whisper on
log-mel features), vision backbones (ViT, DeiT, BEiT, Swin, ConvNeXt, ResNet, RegNet,
EfficientNet, SegFormer, DINOv2), speech (Wav2Vec2, HuBERT)
and CLIP's text and vision towers. Each is exported by the TorchScript exporter
(``dynamo=False``, opset 14, batch and sequence axes dynamic) and a few by the dynamo exporter
(opset 18, static shapes; two text decoders also with ``sdpa`` attention at opset 23, where
``torch.onnx`` writes ONNX's ``Attention``). One layer each: the corpus tests compile every
model with XLA. The stored outputs are the model's own
(``last_hidden_state``, in float32); the manifest records how ONNX Runtime and OpenVINO's own
ONNX frontend fare on each file. A model whose file ONNX Runtime refuses or computes wrong is
left out (an exporter bug, not a model a user can run), and said so on stdout; so is one
that an exporter refuses (Whisper's ``aten::diff`` at opset 14; Mixtral's ``aten::histc``,
and its dynamo export, fail in ``torch.onnx`` 2.13).
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import openvino as ov  # noqa: E402
import torch  # noqa: E402
import transformers as tf  # noqa: E402
from torch import nn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402
from peer_record import run_peer  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")
RTOL, ATOL = 1e-4, 1e-4
VOCAB = 64
TEXT = dict(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
            intermediate_size=32, max_position_embeddings=64)
DECODER = dict(TEXT, num_key_value_heads=1, use_cache=False)


def _cfg(cls, **kw):
    c = cls(**kw)
    c._attn_implementation = kw.get("attn_implementation", "eager")
    return c


# -- architectures: name -> (factory(attn), input kind, about) -------------------------------

def text(cls_cfg, cls_model, **kw):
    return lambda attn: cls_model(_cfg(cls_cfg, **{**TEXT, **kw, "attn_implementation": attn}))


def decoder(cls_cfg, cls_model, **kw):
    return lambda attn: cls_model(_cfg(cls_cfg, **{**DECODER, **kw,
                                                   "attn_implementation": attn}))


ARCHS = {
    "bert": (text(tf.BertConfig, tf.BertModel), "ids", "BERT encoder, padded mask"),
    "roberta": (text(tf.RobertaConfig, tf.RobertaModel, pad_token_id=1), "ids",
                "RoBERTa encoder (positions from the padding mask)"),
    "albert": (text(tf.AlbertConfig, tf.AlbertModel, embedding_size=8), "ids",
               "ALBERT: factorized embedding, shared layers"),
    "electra": (text(tf.ElectraConfig, tf.ElectraModel, embedding_size=8), "ids",
                "ELECTRA discriminator encoder"),
    "distilbert": (lambda attn: tf.DistilBertModel(_cfg(
        tf.DistilBertConfig, vocab_size=VOCAB, dim=16, n_layers=1, n_heads=2, hidden_dim=32,
        max_position_embeddings=64, attn_implementation=attn)), "ids", "DistilBERT"),
    "deberta_v2": (text(tf.DebertaV2Config, tf.DebertaV2Model, relative_attention=True,
                        position_buckets=8, max_relative_positions=16,
                        pos_att_type=["p2c", "c2p"]), "ids",
                   "DeBERTa-v2: disentangled relative-position attention"),
    "mpnet": (text(tf.MPNetConfig, tf.MPNetModel), "ids", "MPNet: relative position bias"),
    "xlm_roberta": (text(tf.XLMRobertaConfig, tf.XLMRobertaModel, pad_token_id=1), "ids",
                    "XLM-RoBERTa encoder"),
    "gpt2": (lambda attn: tf.GPT2Model(_cfg(
        tf.GPT2Config, vocab_size=VOCAB, n_embd=16, n_layer=1, n_head=2, n_positions=64,
        use_cache=False, attn_implementation=attn)), "ids", "GPT-2 decoder, causal"),
    "llama": (decoder(tf.LlamaConfig, tf.LlamaModel), "ids",
              "Llama: RMSNorm, rotary positions, grouped-query attention, SiLU gate"),
    "mistral": (decoder(tf.MistralConfig, tf.MistralModel, sliding_window=4), "ids",
                "Mistral: sliding-window causal mask of 4, rotary, GQA"),
    "qwen2": (decoder(tf.Qwen2Config, tf.Qwen2Model), "ids", "Qwen2: rotary, GQA, biases"),
    "phi": (decoder(tf.PhiConfig, tf.PhiModel, partial_rotary_factor=0.5), "ids",
            "Phi: partial rotary, parallel attention and MLP"),
    "gpt_neox": (lambda attn: tf.GPTNeoXModel(_cfg(
        tf.GPTNeoXConfig, **{**TEXT, "rotary_pct": 0.5, "use_cache": False,
                             "attn_implementation": attn})), "ids",
                 "GPT-NeoX: partial rotary, parallel residual"),
    "opt": (lambda attn: tf.OPTModel(_cfg(
        tf.OPTConfig, vocab_size=VOCAB, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, ffn_dim=32, max_position_embeddings=64, word_embed_proj_dim=16,
        use_cache=False, attn_implementation=attn)), "ids", "OPT decoder, learned positions"),
    "bloom": (lambda attn: tf.BloomModel(_cfg(
        tf.BloomConfig, vocab_size=VOCAB, hidden_size=16, n_layer=1, n_head=2, use_cache=False,
        attn_implementation=attn)), "ids", "BLOOM: ALiBi position bias"),
    "gemma": (decoder(tf.GemmaConfig, tf.GemmaModel, head_dim=8), "ids",
              "Gemma: scaled embeddings, GeGLU, rotary"),
    "falcon": (lambda attn: tf.FalconModel(_cfg(
        tf.FalconConfig, vocab_size=VOCAB, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, new_decoder_architecture=False, multi_query=True,
        use_cache=False, attn_implementation=attn)), "ids", "Falcon: multi-query, rotary"),
    "gptj": (lambda attn: tf.GPTJModel(_cfg(
        tf.GPTJConfig, vocab_size=VOCAB, n_embd=16, n_layer=1, n_head=2, n_positions=64,
        rotary_dim=4, use_cache=False, attn_implementation=attn)), "ids",
             "GPT-J: interleaved rotary on part of each head"),
    "codegen": (lambda attn: tf.CodeGenModel(_cfg(
        tf.CodeGenConfig, vocab_size=VOCAB, n_embd=16, n_layer=1, n_head=2, n_positions=64,
        n_ctx=64, rotary_dim=4, use_cache=False, attn_implementation=attn)), "ids",
                "CodeGen decoder"),
    "stablelm": (decoder(tf.StableLmConfig, tf.StableLmModel, partial_rotary_factor=0.25),
                 "ids", "StableLM: LayerNorm, partial rotary"),
    "qwen3": (decoder(tf.Qwen3Config, tf.Qwen3Model, head_dim=8), "ids",
              "Qwen3: RMSNorm on queries and keys"),
    "gpt_bigcode": (lambda attn: tf.GPTBigCodeModel(_cfg(
        tf.GPTBigCodeConfig, vocab_size=VOCAB, n_embd=16, n_layer=1, n_head=2, n_positions=64,
        multi_query=True, use_cache=False, attn_implementation=attn)), "ids",
                    "GPT-BigCode (StarCoder): multi-query attention"),
    "pegasus": (lambda attn: tf.PegasusModel(_cfg(
        tf.PegasusConfig, vocab_size=VOCAB, d_model=16, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
        decoder_ffn_dim=32, max_position_embeddings=64, use_cache=False,
        attn_implementation=attn)), "seq2seq", "Pegasus: sinusoidal positions"),
    "t5": (lambda attn: tf.T5Model(_cfg(
        tf.T5Config, vocab_size=VOCAB, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2,
        use_cache=False, attn_implementation=attn)), "seq2seq",
           "T5 encoder-decoder: relative position buckets, RMS norms"),
    "bart": (lambda attn: tf.BartModel(_cfg(
        tf.BartConfig, vocab_size=VOCAB, d_model=16, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
        decoder_ffn_dim=32, max_position_embeddings=64, use_cache=False,
        attn_implementation=attn)), "seq2seq", "BART encoder-decoder"),
    "whisper": (lambda attn: tf.WhisperModel(_cfg(
        tf.WhisperConfig, vocab_size=VOCAB, num_mel_bins=8, d_model=16, encoder_layers=1,
        decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=32, decoder_ffn_dim=32, max_source_positions=16,
        max_target_positions=16, pad_token_id=1, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1, use_cache=False, attn_implementation=attn)), "whisper",
                "Whisper: conv front end on log-mel features, encoder-decoder"),
    "vit": (lambda attn: tf.ViTModel(_cfg(
        tf.ViTConfig, image_size=16, patch_size=4, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, attn_implementation=attn),
        add_pooling_layer=False), "pixels16", "ViT on 16x16 images, patch 4"),
    "deit": (lambda attn: tf.DeiTModel(_cfg(
        tf.DeiTConfig, image_size=16, patch_size=4, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, attn_implementation=attn),
        add_pooling_layer=False), "pixels16", "DeiT: class and distillation tokens"),
    "beit": (lambda attn: tf.BeitModel(_cfg(
        tf.BeitConfig, image_size=16, patch_size=4, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, use_relative_position_bias=True,
        attn_implementation=attn), add_pooling_layer=False), "pixels16",
             "BEiT: relative position bias table"),
    "dinov2": (lambda attn: tf.Dinov2Model(_cfg(
        tf.Dinov2Config, image_size=16, patch_size=4, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, mlp_ratio=2, attn_implementation=attn)), "pixels16",
               "DINOv2: layer scale, interpolated positions"),
    "swin": (lambda attn: tf.SwinModel(_cfg(
        tf.SwinConfig, image_size=32, patch_size=4, embed_dim=8, depths=[1, 1],
        num_heads=[1, 2], window_size=4, attn_implementation=attn), add_pooling_layer=False),
             "pixels32", "Swin: shifted windows, patch merging"),
    "convnext": (lambda attn: tf.ConvNextModel(_cfg(
        tf.ConvNextConfig, hidden_sizes=[8, 16], depths=[1, 1], num_stages=2,
        attn_implementation=attn)), "pixels32", "ConvNeXt: depthwise 7x7, LayerNorm"),
    "resnet": (lambda attn: tf.ResNetModel(_cfg(
        tf.ResNetConfig, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
        layer_type="bottleneck", attn_implementation=attn)), "pixels32",
               "ResNet with bottleneck blocks, batch norm"),
    "efficientnet": (lambda attn: tf.EfficientNetModel(_cfg(
        tf.EfficientNetConfig, image_size=32, width_coefficient=0.1, depth_coefficient=0.1,
        hidden_dim=128, attn_implementation=attn)), "pixels32",
                     "EfficientNet: squeeze-excite, Swish, depthwise convolutions"),
    "regnet": (lambda attn: tf.RegNetModel(_cfg(
        tf.RegNetConfig, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], groups_width=4,
        attn_implementation=attn)), "pixels32", "RegNet: grouped convolutions, squeeze-excite"),
    "segformer": (lambda attn: tf.SegformerModel(_cfg(
        tf.SegformerConfig, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
        hidden_sizes=[8, 16], patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2],
        mlp_ratios=[2, 2], attn_implementation=attn)), "pixels32",
                  "SegFormer: overlapping patches, spatial-reduction attention"),
    "wav2vec2": (lambda attn: tf.Wav2Vec2Model(_cfg(
        tf.Wav2Vec2Config, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, conv_dim=(8, 8), conv_stride=(5, 2), conv_kernel=(10, 3),
        num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2, do_stable_layer_norm=True,
        feat_extract_norm="layer", attn_implementation=attn)), "audio",
                 "Wav2Vec2: convolutional feature encoder, grouped conv positions"),
    "hubert": (lambda attn: tf.HubertModel(_cfg(
        tf.HubertConfig, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, conv_dim=(8, 8), conv_stride=(5, 2), conv_kernel=(10, 3),
        num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2,
        attn_implementation=attn)), "audio", "HuBERT: group-norm feature encoder"),
    "clip_text": (lambda attn: tf.CLIPTextModel(_cfg(
        tf.CLIPTextConfig, vocab_size=VOCAB, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, max_position_embeddings=16,
        attn_implementation=attn)), "ids", "CLIP text tower: causal mask, quick GELU"),
    "clip_vision": (lambda attn: tf.CLIPVisionModel(_cfg(
        tf.CLIPVisionConfig, image_size=16, patch_size=4, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, attn_implementation=attn)), "pixels16",
                    "CLIP vision tower: pre-LayerNorm"),
}
DYNAMO = ("bert", "llama", "t5", "whisper", "swin", "wav2vec2")
SDPA = ("llama", "gpt2")  # dynamo, opset 23, sdpa attention


class Hidden(nn.Module):
    """A ``transformers`` model called with keywords; its last hidden state out."""

    def __init__(self, model: nn.Module, names: list[str]):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args))).last_hidden_state


def feeds_of(kind: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    if kind.startswith("pixels"):
        s = int(kind[len("pixels"):])
        return {"pixel_values": rng.standard_normal((2, 3, s, s)).astype(np.float32)}
    if kind == "audio":
        return {"input_values": rng.standard_normal((2, 400)).astype(np.float32)}
    if kind == "whisper":
        return {"input_features": rng.standard_normal((2, 8, 32)).astype(np.float32),
                "decoder_input_ids": rng.integers(0, VOCAB, (2, 5)).astype(np.int64)}
    ids = rng.integers(2, VOCAB, (2, 7)).astype(np.int64)
    mask = np.ones((2, 7), np.int64)
    mask[1, 5:] = 0  # the second row is padded
    out = {"input_ids": ids, "attention_mask": mask}
    if kind == "seq2seq":
        out["decoder_input_ids"] = rng.integers(2, VOCAB, (2, 4)).astype(np.int64)
    return out


def dynamic_axes(kind: str, names: list[str]) -> dict:
    if kind.startswith("pixels") or kind == "whisper":
        return {n: {0: "batch"} for n in names}
    return {n: {0: "batch", 1: f"{n}_len"} for n in names}


def export(name: str, how: str, tmp: Path) -> tuple[Path, dict, list[np.ndarray]]:
    factory, kind, _ = ARCHS[name]
    torch.manual_seed(0)
    model = factory("sdpa" if how == "sdpa23" else "eager").eval()
    feeds = feeds_of(kind)
    names = list(feeds)
    wrapped = Hidden(model, names).eval()
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    with torch.no_grad():
        want = [wrapped(*args).numpy()]
    path = tmp / f"{name}_{how}.onnx"
    sink = io.StringIO()
    with redirect_stdout(sink), redirect_stderr(sink):
        if how == "ts14":
            torch.onnx.export(wrapped, args, str(path), dynamo=False, opset_version=14,
                              input_names=names, output_names=["last_hidden_state"],
                              dynamic_axes=dynamic_axes(kind, names))
        else:
            prog = torch.onnx.export(wrapped, args, dynamo=True,
                                     opset_version=23 if how == "sdpa23" else 18,
                                     input_names=names, output_names=["last_hidden_state"])
            prog.save(str(path), external_data=False)
    return path, feeds, want


def _strip_metadata(m: onnx.ModelProto) -> None:
    """Drop the dynamo exporter's per-node stack traces and names of torch modules (most of
    the file's size; no runtime reads them)."""
    def graphs(g):
        yield g
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    yield from graphs(a.g)
                for sub in a.graphs:
                    yield from graphs(sub)

    del m.metadata_props[:]
    for g in graphs(m.graph):
        del g.metadata_props[:]
        for n in g.node:
            del n.metadata_props[:]
            n.doc_string = ""


def add(corpora: dict[str, Corpus], name: str, how: str, tmp: Path) -> str:
    corpus = corpora["hf" if how == "ts14" else "hf-dynamo"]
    path, feeds, want = export(name, how, tmp)
    m = onnx.load(str(path))
    feeds = {i.name: feeds[i.name] for i in m.graph.input}
    peers = {p: run_peer(p, path, feeds, want, RTOL, ATOL) for p in ("onnxruntime", "openvino")}
    if peers["onnxruntime"] != "ok":
        return f"{name}_{how}: left out (ONNX Runtime: {peers['onnxruntime']})"
    entry = f"{name}_{how}"
    final = corpus.path(entry, ".onnx")
    _strip_metadata(m)
    onnx.save(m, str(final))
    opset = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    ops = sorted({(n.domain + "." if n.domain else "") + n.op_type for n in m.graph.node}
                 - {"Constant"})
    exporter = "TorchScript" if how == "ts14" else "dynamo"
    corpus.add(entry, final, feeds, want, converter=f"torch.onnx ({exporter}) {torch.__version__}",
               opset=opset, rtol=RTOL, atol=ATOL, tags=("transformers", ARCHS[name][1]),
               description=f"{ARCHS[name][2]}; {exporter} exporter: {', '.join(ops)}"[:600],
               output_names=[o.name for o in m.graph.output], peer=peers)
    return f"{corpus.source}/{entry}: {peers}"


def main() -> None:
    versions = {"torch": torch.__version__, "transformers": tf.__version__,
                "onnx": onnx.__version__, "onnxruntime": ort.__version__,
                "openvino": ov.__version__, "numpy": np.__version__}
    corpora = {s: Corpus(s, versions) for s in ("hf", "hf-dynamo")}
    only = set(sys.argv[1:])
    jobs = [(n, "ts14") for n in ARCHS] + [(n, "dyn18") for n in DYNAMO] + \
        [(n, "sdpa23") for n in SDPA]
    with tempfile.TemporaryDirectory() as tmp:
        for name, how in jobs:
            if only and name not in only:
                continue
            try:
                print(add(corpora, name, how, Path(tmp)), flush=True)
            except Exception as e:  # noqa: BLE001 - an exporter that fails is reported
                text = str(e).strip().splitlines()
                print(f"{name}_{how}: left out: {type(e).__name__}: "
                      f"{text[0][:200] if text else ''}", flush=True)
    for corpus in corpora.values():
        corpus.save()
        corpus.prune()
        print(f"{len(corpus.models)} {corpus.source} entries")


if __name__ == "__main__":
    main()
