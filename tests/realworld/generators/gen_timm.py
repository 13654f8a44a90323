"""Real-world corpus sources ``timm`` and ``timm-ov``: image models of the timm library (PyTorch
Image Models), built from tiny configurations with random weights (nothing is downloaded), a
producer this repository was not tuned on.

- ``timm``: each network exported by ``torch.onnx.export`` with the TorchScript exporter
  (``dynamo=False``, opset 17), and the attention networks also by the dynamo exporter at
  opset 23 (``LayerNormalization``, ``Attention``, ``RMSNormalization`` as ONNX ops);
- ``timm-ov``: OpenVINO IR written by OpenVINO's own PyTorch frontend
  (``ov.convert_model(module, example_input=...)``, saved with ``compress_to_fp16=False``):
  the IR OpenVINO users hold, read by itergraph and written to ONNX for ONNX Runtime.

The networks cover what image models are made of: patch embeddings and multi-head attention
(ViT, DeiT-style class tokens, CaiT's class attention and talking heads, XCiT's
cross-covariance attention with L2 normalization, EVA's rotary position embedding, BEiT's
relative position bias), windowed attention with cyclic shifts (Swin), LeViT's attention biases
gathered by index, a bidirectional LSTM over rows and columns (Sequencer2d), VOLO's outlook
attention (``Unfold``/``Fold``), MLP-Mixer, PoolFormer's average pooling without padded
elements, ConvNeXt's channels-last LayerNorm, EfficientNet's squeeze-excite with Swish,
MobileNetV3's hard-swish and hard-sigmoid, DenseNet's concatenations, a small ResNet,
ConvMixer.

Each entry stores its feeds (two 3x32x32 images; the batch axis is dynamic in the files) and
torch's own outputs (``oracle="framework"``); ``peer`` records how ONNX Runtime and OpenVINO
fared on the file (each in a child process, `peer_record`).

Run by hand from the repository root (see README.md here for the environment)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_timm.py
"""

from __future__ import annotations

import io
import os
import sys
import warnings
from contextlib import redirect_stderr, redirect_stdout
from functools import partial
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import openvino as ov  # noqa: E402
import timm  # noqa: E402
import torch  # noqa: E402
from timm.models import (  # noqa: E402
    beit,
    cait,
    convmixer,
    convnext,
    densenet,
    efficientnet,
    eva,
    levit,
    metaformer,
    mlp_mixer,
    mobilenetv3,
    resnet,
    sequencer,
    swin_transformer,
    vision_transformer,
    volo,
    xcit,
)
from timm.models._efficientnet_blocks import SqueezeExcite  # noqa: E402
from timm.models._efficientnet_builder import decode_arch_def, round_channels  # noqa: E402
from torch import nn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402
from peer_record import run_peer  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")
RTOL, ATOL = 1e-4, 1e-4

#: name -> (factory, description); every factory makes a 10-class classifier of 3x32x32 images
MODELS = {
    "vit": (lambda: vision_transformer.VisionTransformer(
        img_size=32, patch_size=8, embed_dim=16, depth=2, num_heads=2, num_classes=10),
        "ViT: patch embedding, class token, 2 pre-norm blocks of 2-head attention + GELU MLP"),
    "swin": (lambda: swin_transformer.SwinTransformer(
        img_size=32, patch_size=4, window_size=4, embed_dim=16, depths=(2, 1), num_heads=(1, 2),
        num_classes=10),
        "Swin: window attention with relative position bias, shifted windows (roll + mask), "
        "patch merging"),
    "convnext": (lambda: convnext.ConvNeXt(depths=(1, 1, 1, 1), dims=(8, 16, 24, 32),
                                           num_classes=10),
                 "ConvNeXt: 7x7 depthwise conv, channels-last LayerNorm, GELU MLP, layer scale"),
    "mixer": (lambda: mlp_mixer.MlpMixer(img_size=32, patch_size=8, embed_dim=16, num_blocks=2,
                                         num_classes=10),
              "MLP-Mixer: token-mixing and channel-mixing MLPs over transposed patches"),
    "poolformer": (lambda: metaformer.MetaFormer(depths=(1, 1, 1, 1), dims=(8, 16, 24, 32),
                                                 num_classes=10),
                   "PoolFormer: AvgPool token mixer (count_include_pad=False), GroupNorm, "
                   "layer scale"),
    "xcit": (lambda: xcit.Xcit(img_size=32, patch_size=8, embed_dim=16, depth=1, num_heads=2,
                               cls_attn_layers=1, num_classes=10),
             "XCiT: cross-covariance attention (L2-normalized q and k, learned temperature), "
             "local patch interaction, Fourier position encoding, class attention"),
    "eva": (lambda: eva.Eva(img_size=32, patch_size=8, embed_dim=16, depth=2, num_heads=2,
                            use_rot_pos_emb=True, num_classes=10),
            "EVA: rotary position embedding on q and k, SwiGLU-free MLP, class token"),
    "beit": (lambda: beit.Beit(img_size=32, patch_size=8, embed_dim=16, depth=2, num_heads=2,
                               use_rel_pos_bias=True, num_classes=10),
             "BEiT: shared relative position bias gathered from a table by index, layer scale"),
    "cait": (lambda: cait.Cait(img_size=32, patch_size=8, embed_dim=16, depth=2, num_heads=2,
                               depth_token_only=1, num_classes=10),
             "CaiT: talking-heads attention, class attention layers, layer scale"),
    "levit": (lambda: levit.Levit(img_size=32, embed_dim=(16, 24), key_dim=8, num_heads=(2, 2),
                                  depth=(1, 1), num_classes=10),
              "LeViT: conv stem, attention biases gathered by index, hard-swish, "
              "attention subsampling, BatchNorm1d after linears"),
    "sequencer": (lambda: sequencer.Sequencer2d(
        img_size=32, layers=(1, 1), patch_sizes=(8, 2), embed_dims=(16, 24), hidden_sizes=(8, 12),
        mlp_ratios=(2, 2), num_classes=10),
        "Sequencer2d: bidirectional LSTMs along rows and along columns"),
    "volo": (lambda: volo.VOLO(layers=(1, 1), img_size=32, embed_dims=(16, 32), num_heads=(1, 2),
                               outlook_attention=(True, False), downsamples=(True, False),
                               stem_hidden_dim=8, patch_size=8, num_classes=10),
             "VOLO: outlook attention (Unfold, softmax over a local window, Fold), "
             "class attention"),
    "efficientnet": (lambda: efficientnet.EfficientNet(
        block_args=decode_arch_def([["ds_r1_k3_s1_e1_c8_se0.25"], ["ir_r1_k3_s2_e6_c12_se0.25"],
                                    ["ir_r1_k5_s2_e6_c16_se0.25"]]),
        num_features=64, stem_size=8, act_layer=nn.SiLU, num_classes=10),
        "EfficientNet blocks: depthwise-separable and inverted residuals with squeeze-excite, "
        "Swish"),
    "mobilenetv3": (lambda: mobilenetv3.MobileNetV3(
        block_args=decode_arch_def([["ds_r1_k3_s2_e1_c8_se0.25_nre"], ["ir_r1_k3_s2_e4.5_c12_nre"],
                                    ["ir_r1_k5_s2_e4_c16_se0.25"], ["cn_r1_k1_s1_c32"]]),
        num_features=64, stem_size=8, act_layer=nn.Hardswish,
        se_layer=partial(SqueezeExcite, gate_layer="hard_sigmoid", force_act_layer=nn.ReLU,
                         rd_round_fn=round_channels), num_classes=10),
        "MobileNetV3-Small blocks: hard-swish, hard-sigmoid squeeze-excite, ReLU stages"),
    "densenet": (lambda: densenet.DenseNet(growth_rate=4, block_config=(2, 2), num_classes=10),
                 "DenseNet: dense blocks concatenating every layer's features, transitions"),
    "resnet": (lambda: resnet.ResNet(block=resnet.BasicBlock, layers=(1, 1, 1, 1),
                                     channels=(8, 16, 24, 32), stem_width=8, num_classes=10),
               "ResNet with basic blocks, channels 8-32: max-pool stem, strided shortcuts"),
    "convmixer": (lambda: convmixer.ConvMixer(dim=16, depth=2, kernel_size=3, patch_size=4,
                                              num_classes=10),
                  "ConvMixer: patch conv, depthwise/pointwise convs with residual, BatchNorm"),
}

#: exported by the dynamo exporter at opset 23 too (LayerNormalization, Attention as ONNX ops)
DYNAMO = ("vit", "swin", "convnext", "eva", "cait")
#: converted by OpenVINO's PyTorch frontend too (source ``timm-ov``)
OV_TOO = ("vit", "swin", "convnext", "xcit", "eva", "beit", "levit", "sequencer", "volo",
          "efficientnet", "mobilenetv3")


def build(name: str):
    torch.manual_seed(0)
    module = MODELS[name][0]().eval()
    with torch.no_grad():  # random weights: move BatchNorm statistics off the identity
        for m in module.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    return module


def images(batch: int = 2) -> np.ndarray:
    return np.random.RandomState(0).randn(batch, 3, 32, 32).astype(np.float32)


def _strip(graph) -> None:
    """Drop the dynamo exporter's per-node source records: most of a small file's bytes."""
    for n in graph.node:
        n.doc_string = ""
        del n.metadata_props[:]
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _strip(a.g)


def export_onnx(module, x: np.ndarray, path: Path, dynamo: bool) -> None:
    args = (torch.from_numpy(x),)
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        if dynamo:
            torch.onnx.export(module, args, str(path), dynamo=True, opset_version=23,
                              input_names=["x"],
                              dynamic_shapes={"x": {0: torch.export.Dim("batch", max=64)}},
                              external_data=False)
        else:
            torch.onnx.export(module, args, str(path), dynamo=False, opset_version=17,
                              input_names=["x"], output_names=["logits"],
                              dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
    model = onnx.load(str(path))
    for graph in [model.graph, *(f for f in model.functions)]:
        _strip(graph)
    model.doc_string = ""
    onnx.save(model, str(path))


def add_onnx(corpus: Corpus, name: str, dynamo: bool) -> str:
    module, x = build(name), images()
    entry = f"{name}_dynamo_op23" if dynamo else f"{name}_op17"
    path = corpus.path(entry, ".onnx")
    export_onnx(module, x, path, dynamo)
    with torch.no_grad():
        want = [module(torch.from_numpy(x)).numpy()]
    feeds = {onnx.load(str(path)).graph.input[0].name: x}
    peer = {rt: run_peer(rt, path, feeds, want, RTOL, ATOL) for rt in ("onnxruntime", "openvino")}
    corpus.add(entry, path, feeds, want,
               converter="torch.onnx " + ("dynamo (opset 23)" if dynamo else
                                          "TorchScript (dynamo=False, opset 17)"),
               opset=23 if dynamo else 17, rtol=RTOL, atol=ATOL,
               description=MODELS[name][1], peer=peer)
    return f"timm/{entry}: {peer}"


def add_ir(corpus: Corpus, name: str) -> str:
    module, x = build(name), images()
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        model = ov.convert_model(module, example_input=torch.from_numpy(x),
                                 input=[ov.PartialShape([-1, 3, 32, 32])])
    path = corpus.path(f"{name}_ptfe", ".xml")
    ov.save_model(model, str(path), compress_to_fp16=False)
    with torch.no_grad():
        want = [module(torch.from_numpy(x)).numpy()]
    feeds = {model.inputs[0].get_any_name(): x}
    peer = {"openvino": run_peer("openvino", path, feeds, want, RTOL, ATOL)}
    corpus.add(f"{name}_ptfe", path, feeds, want,
               converter=f"OpenVINO {ov.__version__} PyTorch frontend (ov.convert_model on the "
               "eager module)", opset=None, rtol=RTOL, atol=ATOL,
               description=MODELS[name][1], peer=peer)
    return f"timm-ov/{name}_ptfe: {peer}"


def main(names: list[str]) -> None:
    versions = {"timm": timm.__version__, "torch": torch.__version__, "onnx": onnx.__version__,
                "onnxruntime": ort.__version__, "openvino": ov.__version__,
                "numpy": np.__version__}
    onnx_corpus = Corpus("timm", versions)
    ir_corpus = Corpus("timm-ov", dict(versions, converter=f"openvino {ov.__version__}"))
    for name in names or MODELS:
        for what in ("op17", "dynamo", "ptfe"):
            if what == "dynamo" and name not in DYNAMO or what == "ptfe" and name not in OV_TOO:
                continue
            try:
                print(add_ir(ir_corpus, name) if what == "ptfe" else
                      add_onnx(onnx_corpus, name, what == "dynamo"), flush=True)
            except Exception as e:  # noqa: BLE001 - an export that fails is reported
                print(f"{name} {what}: left out: {type(e).__name__}: "
                      f"{str(e).strip().splitlines()[0][:200]}", flush=True)
    onnx_corpus.save()
    ir_corpus.save()
    print(f"\n{len(onnx_corpus.models)} timm entries, {len(ir_corpus.models)} timm-ov entries")


if __name__ == "__main__":
    main(sys.argv[1:])
