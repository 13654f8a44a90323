"""Real-world corpus sources ``ort-fused`` and ``fp16``: what ONNX Runtime's transformer
optimizer and the float16 converters write.

Run by hand from the repository root, in the environment of ``gen_torch.py`` plus
``pip install transformers onnxconverter-common`` (README.md)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_ort_fused.py

``ort-fused``: tiny Hugging Face ``transformers`` models built from a config with random
weights (nothing downloaded; BERT, DistilBERT, GPT-2, ViT, T5's encoder), exported by
``torch.onnx.export`` (TorchScript exporter, opset 17, eager attention) and rewritten by
``onnxruntime.transformers.optimizer.optimize_model``: its Python fusions
(``EmbedLayerNormalization``, ``Attention``, ``MultiHeadAttention``,
``SkipLayerNormalization``, ``BiasGelu``, ``FastGelu``, ``SimplifiedLayerNormalization``,
...) and, for ``*_ort`` entries, ONNX Runtime's own graph optimizer as well (``opt_level=2``,
the file ONNX Runtime saves: ``FusedMatMul``, ``QuickGelu``, ...).

``fp16``: the same optimized BERT and GPT-2 converted by the optimizer's
``convert_float_to_float16(keep_io_types=True)``, and small PyTorch networks (those of
``gen_ort_quant.py``: MLP, CNN, GRU, LSTM, transformer encoder layer, 1-D convolutions, a
scripted loop) converted by ``onnxconverter_common.float16.convert_float_to_float16``, with
float32 inputs and outputs kept (``keep_io_types=True``) and, for ``*_fp16io``, without.

The stored outputs are ONNX Runtime's on each file (``oracle="onnxruntime"``);
``peer["openvino"]`` records OpenVINO's own ONNX frontend on it, ``peer["framework"]`` how
the PyTorch model's float32 outputs compare.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxconverter_common  # noqa: E402
import onnxruntime as ort  # noqa: E402
import openvino as ov  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from onnxconverter_common import float16  # noqa: E402
from onnxruntime.transformers import optimizer  # noqa: E402
from onnxruntime.transformers.fusion_options import FusionOptions  # noqa: E402
from torch import nn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402
from gen_ort_quant import BASES, export, run_ort  # noqa: E402
from peer_record import compare, run_peer  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")


class Hidden(nn.Module):
    """A ``transformers`` model called with keywords; its last hidden state out."""

    def __init__(self, model: nn.Module, image: bool = False):
        super().__init__()
        self.model = model
        self.image = image

    def forward(self, *args):
        if self.image:
            return self.model(pixel_values=args[0]).last_hidden_state
        if len(args) == 1:
            return self.model(input_ids=args[0]).last_hidden_state
        return self.model(input_ids=args[0], attention_mask=args[1]).last_hidden_state


def _tokens(vocab: int, masked: bool) -> dict:
    rng = np.random.default_rng(0)
    feeds = {"input_ids": rng.integers(0, vocab, (2, 7)).astype(np.int64)}
    if masked:
        mask = np.ones((2, 7), np.int64)
        mask[1, 5:] = 0  # the second row is padded
        feeds["attention_mask"] = mask
    return feeds


def bert():
    c = transformers.BertConfig(vocab_size=60, hidden_size=16, num_hidden_layers=2,
                                num_attention_heads=2, intermediate_size=32,
                                max_position_embeddings=32, attn_implementation="eager")
    return transformers.BertModel(c)


def distilbert():
    c = transformers.DistilBertConfig(vocab_size=60, dim=16, n_layers=2, n_heads=2,
                                      hidden_dim=32, max_position_embeddings=32,
                                      attn_implementation="eager")
    return transformers.DistilBertModel(c)


def gpt2():
    c = transformers.GPT2Config(vocab_size=60, n_embd=16, n_layer=2, n_head=2, n_positions=32,
                                use_cache=False, attn_implementation="eager")
    return transformers.GPT2Model(c)


def vit():
    c = transformers.ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=16,
                               num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=32, attn_implementation="eager")
    return transformers.ViTModel(c, add_pooling_layer=False)


def t5():
    c = transformers.T5Config(vocab_size=60, d_model=16, d_kv=8, d_ff=32, num_layers=2,
                              num_heads=2, use_cache=False, attn_implementation="eager")
    return transformers.T5EncoderModel(c)


def pixels() -> dict:
    return {"pixel_values": np.random.default_rng(0).standard_normal((2, 3, 16, 16))
            .astype(np.float32)}


#: name -> (model factory, feeds, model_type, heads, hidden, fusion option overrides, about)
TRANSFORMERS = {
    "bert": (bert, _tokens(60, True), "bert", 2, 16, {},
             "BERT, 2 layers, padded attention mask"),
    "bert_fastgelu": (bert, _tokens(60, True), "bert", 2, 16,
                      {"enable_gelu_approximation": True},
                      "BERT with the optimizer's GELU approximation (FastGelu)"),
    "bert_mha": (bert, _tokens(60, True), "bert", 2, 16,
                 {"use_multi_head_attention": True, "enable_embed_layer_norm": False},
                 "BERT with MultiHeadAttention and the embedding left unfused"),
    "distilbert": (distilbert, _tokens(60, True), "bert", 2, 16, {},
                   "DistilBERT, 2 layers, padded attention mask"),
    "gpt2": (gpt2, _tokens(60, True), "gpt2", 2, 16, {},
             "GPT-2, 2 layers, causal, padded attention mask (without a mask transformers "
             "5 traces aten::diff, which the TorchScript exporter cannot export)"),
    "vit": (vit, pixels(), "vit", 2, 16, {}, "ViT on 16x16 images, patch 4"),
    "t5_encoder": (t5, _tokens(60, True), "t5", 2, 16, {},
                   "T5 encoder: RMS layer norms, relative position bias"),
}
ORT_LEVEL = ("bert", "gpt2", "vit", "t5_encoder")  # also written with ORT's own fusions
FP16 = ("bert", "gpt2")  # also converted to float16 after fusion


def export_transformer(name: str, tmp: Path) -> tuple[nn.Module, Path, dict]:
    factory, feeds, *_ = TRANSFORMERS[name]
    torch.manual_seed(0)
    model = Hidden(factory().eval(), image="pixel_values" in feeds).eval()
    path = tmp / f"{name}.onnx"
    names = list(feeds)
    dyn = {n: ({0: "batch"} if n == "pixel_values" else {0: "batch", 1: "seq"})
           for n in names}
    torch.onnx.export(model, tuple(torch.from_numpy(v) for v in feeds.values()), str(path),
                      dynamo=False, opset_version=17, input_names=names,
                      output_names=["last_hidden_state"], dynamic_axes=dyn)
    return model, path, feeds


def torch_outputs(model: nn.Module, feeds: dict) -> list[np.ndarray]:
    with torch.no_grad():
        got = model(*(torch.from_numpy(v) for v in feeds.values()))
    return [t.numpy() for t in (got if isinstance(got, tuple) else (got,))]


def record(corpus: Corpus, entry: str, path: Path, feeds: dict, framework: list, *,
           converter: str, rtol: float, atol: float, description: str, tags=()) -> str:
    model = onnx.load(str(path))
    feeds = {i.name: feeds[i.name] for i in model.graph.input}
    want = run_ort(path, feeds, optimized=True)
    peers = {"framework": compare([f.astype(w.dtype) for f, w in zip(framework, want)],
                                  want, rtol, atol),
             "openvino": run_peer("openvino", path, feeds, want, rtol, atol)}
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    ops = sorted({(n.domain + "." if n.domain else "") + n.op_type for n in model.graph.node}
                 - {"Constant"})
    corpus.add(entry, path, feeds, want, converter=converter, opset=opset,
               oracle="onnxruntime", rtol=rtol, atol=atol, tags=tags,
               description=f"{description}: {', '.join(ops)}"[:600],
               output_names=[o.name for o in model.graph.output], peer=peers)
    return f"{corpus.source}/{entry}: {peers}"


def fused(corpus: Corpus, fp16: Corpus, name: str, tmp: Path) -> list[str]:
    _, _, model_type, heads, hidden, overrides, about = TRANSFORMERS[name]
    module, src, feeds = export_transformer(name, tmp)
    framework = torch_outputs(module, feeds)
    options = FusionOptions(model_type)
    for key, value in overrides.items():
        setattr(options, key, value)
    done = []
    for level in (0, 2) if name in ORT_LEVEL else (0,):
        entry = name if level == 0 else f"{name}_ort"
        opt = optimizer.optimize_model(str(src), model_type=model_type, num_heads=heads,
                                       hidden_size=hidden, optimization_options=options,
                                       opt_level=level)
        path = corpus.path(entry, ".onnx")
        opt.save_model_to_file(str(path))
        how = "Python fusions" if level == 0 else "Python fusions and ORT's opt_level 2"
        done.append(record(corpus, entry, path, feeds, framework,
                           converter=f"onnxruntime.transformers.optimizer ({how})",
                           rtol=1e-4, atol=1e-4, description=about, tags=(model_type,)))
        if level == 0 and name in FP16:
            opt.convert_float_to_float16(keep_io_types=True)
            path = fp16.path(f"{name}_fused", ".onnx")
            opt.save_model_to_file(str(path))
            done.append(record(fp16, f"{name}_fused", path, feeds, framework,
                               converter="onnxruntime.transformers optimizer, "
                               "convert_float_to_float16(keep_io_types=True)",
                               rtol=1e-2, atol=1e-2, description=about + ", float16",
                               tags=("float16",)))
    return done


def half(fp16: Corpus, base: str, keep_io: bool, tmp: Path) -> str:
    factory, make, scripted, dyn, about = BASES[base]
    torch.manual_seed(0)
    module = factory().eval()
    feeds = make(0)
    src = tmp / f"{base}.onnx"
    export(module, feeds, scripted, dyn, src)
    framework = torch_outputs(module, feeds)
    model = float16.convert_float_to_float16(onnx.load(str(src)), keep_io_types=keep_io)
    entry = base if keep_io else f"{base}_fp16io"
    path = fp16.path(entry, ".onnx")
    onnx.save(model, str(path))
    if not keep_io:
        feeds = {k: v.astype(np.float16) if v.dtype == np.float32 else v
                 for k, v in feeds.items()}
    return record(fp16, entry, path, feeds, framework,
                  converter="onnxconverter_common.float16.convert_float_to_float16"
                  f"(keep_io_types={keep_io})", rtol=1e-2, atol=1e-2,
                  description=about + ", float16", tags=("float16",))


def main() -> None:
    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "onnxconverter-common": onnxconverter_common.__version__,
                "onnx": onnx.__version__, "onnxruntime": ort.__version__,
                "openvino": ov.__version__, "numpy": np.__version__}
    corpus, fp16 = Corpus("ort-fused", versions), Corpus("fp16", versions)
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [(fused, (corpus, fp16, name)) for name in TRANSFORMERS]
        jobs += [(half, (fp16, base, keep)) for base in BASES
                 for keep in ((True, False) if base in ("mlp", "cnn", "loop_cell") else (True,))]
        for fn, args in jobs:
            try:
                out = fn(*args, Path(tmp))
                print("\n".join(out) if isinstance(out, list) else out, flush=True)
            except Exception as e:  # noqa: BLE001 - a converter that fails is reported
                text = str(e).strip().splitlines()
                print(f"{args[-2] if fn is half else args[-1]}: left out: "
                      f"{type(e).__name__}: {text[0][:200] if text else ''}", flush=True)
    for c in (corpus, fp16):
        c.save()
        c.prune()
    print(f"\n{len(corpus.models)} ort-fused entries, {len(fp16.models)} fp16 entries")


if __name__ == "__main__":
    main()
