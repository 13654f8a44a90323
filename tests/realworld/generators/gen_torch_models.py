"""Small everyday PyTorch networks exported by ``torch.onnx.export`` (source ``torch-models``):
the layers real models are made of rather than loop programs (``gen_torch.py`` and
``gen_torch_unseen.py`` hold those).

Run by hand from the repository root, in the environment of ``gen_torch.py`` (README.md)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_torch_models.py

The networks: a GRU sequence classifier (embedding, GRU, linear on the last state), a
bidirectional LSTM tagger, a transformer encoder layer (``nn.TransformerEncoderLayer``:
multi-head attention, layer norm, GELU), a small CNN with a depthwise-separable block, batch
norm, pooling and a classifier head, a 1-D temporal convolution with dilation, a tiny U-Net
(GroupNorm, transposed convolution, bilinear upsampling, PixelShuffle), a causal attention
block (RMSNorm, ``scaled_dot_product_attention(is_causal=True)``), reflect padding with
InstanceNorm and top-k, a transformer decoder layer with a causal mask built in the graph,
``affine_grid``/``grid_sample``, a mix of einsum, sort, logsumexp and circular padding, and
four ``torch.jit.script`` programs (a running-maximum ``for`` loop over the time axis, a
``while`` loop refining a value until it converges, a gated-cell greedy decoder run for a
run-time number of steps, also zero, and a loop with ``continue`` writing rows by index).
Each is exported by the TorchScript exporter (``dynamo=False``, opset 17) and, where it has
no scripted control flow, by the dynamo exporter at its default opset (20) and, for the
attention and normalization blocks, at 23.

The stored outputs are ONNX Runtime's on the file (``oracle="onnxruntime"``); the manifest
records how torch's own outputs compare (``peer["framework"]``) and how OpenVINO's own ONNX
frontend fares on the file (``peer["openvino"]``).
"""

from __future__ import annotations

import io
import os
import sys
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import openvino as ov  # noqa: E402
import torch  # noqa: E402
from torch import Tensor, nn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402
from gen_sklearn import compare, first_line  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}


class GruClassifier(nn.Module):
    """Token ids [B, T] -> class scores [B, 3] from the GRU's last state."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.gru = nn.GRU(8, 6, batch_first=True)
        self.head = nn.Linear(6, 3)

    def forward(self, ids: Tensor) -> Tensor:
        _, h = self.gru(self.emb(ids))
        return self.head(h[-1])


class LstmTagger(nn.Module):
    """Features [B, T, 5] -> per-step tag log-probabilities [B, T, 4]."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 4, batch_first=True, bidirectional=True)
        self.out = nn.Linear(8, 4)

    def forward(self, x: Tensor) -> Tensor:
        y, _ = self.lstm(x)
        return torch.log_softmax(self.out(y), dim=-1)


class Encoder(nn.Module):
    """One ``TransformerEncoderLayer`` (d_model 16, 4 heads, GELU) with a key padding mask."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0,
                                                activation="gelu", batch_first=True)

    def forward(self, x: Tensor, pad: Tensor) -> Tensor:
        return self.layer(x, src_key_padding_mask=pad)


class DepthwiseCnn(nn.Module):
    """Images [B, 3, 16, 16] -> class probabilities [B, 5]."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU6())
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 16, 1)
        self.bn = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(16, 5)

    def forward(self, x: Tensor) -> Tensor:
        y = self.pool(torch.nn.functional.hardswish(self.bn(self.pw(self.dw(self.stem(x))))))
        return torch.softmax(self.head(y.mean(dim=(2, 3))), dim=-1)


class TemporalConv(nn.Module):
    """Signals [B, 2, T] -> [B, 4, T]: dilated causal 1-D convolutions with a residual."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(2, 4, 3, dilation=2, padding=4)
        self.c2 = nn.Conv1d(4, 4, 3, dilation=1, padding=2)
        self.skip = nn.Conv1d(2, 4, 1)

    def forward(self, x: Tensor) -> Tensor:
        t = x.shape[-1]
        y = torch.tanh(self.c1(x)[..., :t])
        y = torch.sigmoid(self.c2(y)[..., :t])
        return y + self.skip(x)


class RunningMax(nn.Module):
    """A scripted ``for`` over the time axis: the running maximum of a projected sequence."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, x: Tensor) -> Tensor:
        y = self.proj(x)
        best = y[:, 0]
        outs = [best]
        for t in range(1, y.shape[1]):
            best = torch.maximum(best, y[:, t])
            outs.append(best)
        return torch.stack(outs, dim=1)


class Refine(nn.Module):
    """A scripted ``while``: Newton steps on ``y**2 = x`` until every step is below 1e-4."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        y = torch.ones_like(x)
        steps = torch.zeros((), dtype=torch.long)
        delta = torch.ones_like(x)
        while bool(delta.abs().max() > 1e-4) and int(steps) < 50:
            nxt = 0.5 * (y + x / y)
            delta = nxt - y
            y = nxt
            steps = steps + 1
        return y, steps


class TinyUnet(nn.Module):
    """Images [B, 2, 8, 8] -> [B, 2, 8, 8]: down by a strided conv, GroupNorm, up by a
    transposed conv and by bilinear upsampling, a skip concatenation, PixelShuffle."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(2, 8, 3, stride=2, padding=1)
        self.norm = nn.GroupNorm(2, 8)
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.mix = nn.Conv2d(4 + 8 + 2, 8, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)
        self.out = nn.Conv2d(2, 2, 3, stride=2, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        d = torch.relu(self.norm(self.down(x)))
        u = self.up(d)
        b = nn.functional.interpolate(d, scale_factor=2.0, mode="bilinear", align_corners=False)
        y = self.mix(torch.cat([u, b, x], dim=1))
        return self.out(self.shuffle(y))


class CausalAttention(nn.Module):
    """Tokens [B, T, 8] -> [B, T, 8]: RMSNorm, causal scaled-dot-product attention with two
    heads, a tanh-GELU MLP."""

    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(8)
        self.qkv = nn.Linear(8, 24)
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU("tanh"), nn.Linear(16, 8))

    def forward(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, t, 3, 2, 4).permute(2, 0, 3, 1, 4)
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + a.transpose(1, 2).reshape(b, t, 8)
        return x + self.mlp(x)


class PadNormTopk(nn.Module):
    """Images [B, 3, 6, 6] -> (top-3 scores, their indices, cumulative sums): reflect pad,
    InstanceNorm2d, LeakyReLU, global max, topk, gather, cumsum."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3)
        self.norm = nn.InstanceNorm2d(6, affine=True)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        y = nn.functional.pad(x, (1, 1, 1, 1), mode="reflect")
        y = nn.functional.leaky_relu(self.norm(self.conv(y)), 0.1)
        s = y.amax(dim=(2, 3))
        top, idx = torch.topk(s, 3, dim=1)
        picked = torch.gather(s, 1, idx.flip(1))
        return top, idx, torch.cumsum(picked, dim=1)


class CausalDecoder(nn.Module):
    """Target [B, T, 8] and memory [B, S, 8] -> [B, T, 8]: one ``TransformerDecoderLayer``
    whose causal mask is built in the graph (``torch.triu`` of the run-time length)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                                batch_first=True)

    def forward(self, tgt: Tensor, memory: Tensor) -> Tensor:
        t = tgt.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        return self.layer(tgt, memory, tgt_mask=mask)


class Warp(nn.Module):
    """Images [B, 2, 6, 6] and angles [B] -> rotated images: ``affine_grid`` and
    ``grid_sample`` (bilinear, zeros padding), then an adaptive average pool to 3x3."""

    def forward(self, x: Tensor, angle: Tensor) -> Tensor:
        c, s = torch.cos(angle), torch.sin(angle)
        zero = torch.zeros_like(c)
        theta = torch.stack([torch.stack([c, -s, zero], 1), torch.stack([s, c, zero], 1)], 1)
        grid = nn.functional.affine_grid(theta, list(x.shape), align_corners=False)
        y = nn.functional.grid_sample(x, grid, align_corners=False)
        return nn.functional.adaptive_avg_pool2d(y, 3)


class MiscOps(nn.Module):
    """Rows [B, 5, 4] -> several reductions and orderings: einsum, sort, logsumexp, norm,
    a count of positives, circular padding with a convolution."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(5, 3, 3, padding=1, padding_mode="circular")
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        g = torch.einsum("bij,jk,blk->bil", x, self.w, x)
        vals, order = torch.sort(x.sum(-1), dim=1, descending=True)
        lse = torch.logsumexp(g, dim=-1) + torch.linalg.vector_norm(x, dim=(1, 2))[:, None]
        count = (self.conv(x) > 0).sum(dim=(1, 2))
        return vals, order, lse, count


class CellDecoder(nn.Module):
    """A scripted greedy decoder: a gated recurrent cell (written out: the TorchScript
    exporter cannot export a scripted ``GRUCell``) stepped ``steps`` times (a run-time int),
    each step feeding back the embedding of its argmax; returns the tokens and the scores."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.ih = nn.Linear(4, 10)
        self.hh = nn.Linear(5, 10)
        self.out = nn.Linear(5, 6)

    def cell(self, e: Tensor, h: Tensor) -> Tensor:
        z, c = (self.ih(e) + self.hh(h)).chunk(2, dim=-1)
        z = torch.sigmoid(z)
        return z * h + (1 - z) * torch.tanh(c)

    def forward(self, h: Tensor, steps: Tensor) -> tuple[Tensor, Tensor]:
        tok = torch.zeros(h.shape[0], dtype=torch.long)
        toks = torch.zeros(h.shape[0], 0, dtype=torch.long)
        total = torch.zeros(h.shape[0])
        for _ in range(int(steps)):
            h = self.cell(self.emb(tok), h)
            logp = torch.log_softmax(self.out(h), dim=-1)
            best, tok = logp.max(dim=-1)
            total = total + best
            toks = torch.cat([toks, tok[:, None]], dim=1)
        return toks, total


class SkipOdd(nn.Module):
    """A scripted loop with ``continue``: sums the rows of ``x`` whose index is even and whose
    mean is positive, into a preallocated output written by index (``out[i] = ...``)."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        out = torch.zeros_like(x)
        acc = torch.zeros(x.shape[1])
        for i in range(x.shape[0]):
            if i % 2 == 1:
                continue
            row = x[i]
            if bool(row.mean() > 0):
                acc = acc + row
            out[i] = acc
        return out, acc


def rnd(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


PAD = np.zeros((2, 5), bool)
PAD[1, 3:] = True
#: name -> (module factory, feeds, scripted, description)
CASES = {
    "gru_classifier": (GruClassifier, {"ids": np.random.RandomState(1).randint(0, 20, (2, 7))},
                       False, "Embedding -> GRU (batch_first) -> Linear on the last state."),
    "lstm_tagger": (LstmTagger, {"x": rnd(2, 6, 5)}, False,
                    "Bidirectional LSTM -> Linear -> log_softmax per step."),
    "transformer_encoder_layer": (Encoder, {"x": rnd(2, 5, 16), "pad": PAD}, False,
                                  "nn.TransformerEncoderLayer(16, 4 heads, GELU) with a key "
                                  "padding mask (row 1 padded from step 3)."),
    "depthwise_cnn": (DepthwiseCnn, {"x": rnd(2, 3, 16, 16)}, False,
                      "Conv-BN-ReLU6, depthwise 3x3 + pointwise 1x1, BN, hardswish, "
                      "MaxPool, global mean, Linear, softmax (eval mode)."),
    "temporal_conv": (TemporalConv, {"x": rnd(2, 2, 12)}, False,
                      "Dilated causal Conv1d pair with a 1x1 residual."),
    "tiny_unet": (TinyUnet, {"x": rnd(2, 2, 8, 8)}, False,
                  "Strided conv, GroupNorm, ConvTranspose2d, bilinear interpolate, concat, "
                  "PixelShuffle."),
    "causal_attention": (CausalAttention, {"x": rnd(2, 5, 8)}, False,
                         "RMSNorm, causal scaled_dot_product_attention (2 heads), tanh GELU "
                         "MLP, residuals."),
    "pad_norm_topk": (PadNormTopk, {"x": rnd(2, 3, 6, 6)}, False,
                      "Reflect pad, InstanceNorm2d(affine), LeakyReLU, amax, topk, gather, "
                      "cumsum."),
    "causal_decoder": (CausalDecoder, {"tgt": rnd(2, 4, 8), "memory": rnd(2, 6, 8, seed=1)},
                       False, "nn.TransformerDecoderLayer(8, 2 heads) with a causal mask "
                       "built from the run-time length (torch.triu)."),
    "warp": (Warp, {"x": rnd(2, 2, 6, 6), "angle": np.array([0.3, -1.1], np.float32)}, False,
             "affine_grid + grid_sample (bilinear, zeros) + adaptive_avg_pool2d."),
    "misc_ops": (MiscOps, {"x": rnd(2, 5, 4)}, False,
                 "einsum, sort (descending), logsumexp, vector_norm, a count of positives, "
                 "Conv1d with circular padding."),
    "cell_decoder_script": (CellDecoder, {"h": rnd(2, 5),
                                                  "steps": np.array(4, np.int64)}, True,
                                "torch.jit.script: gated-cell greedy decoding for a run-time "
                                "number of steps, tokens concatenated."),
    "cell_decoder_zero_steps_script": (CellDecoder, {"h": rnd(2, 5),
                                                     "steps": np.array(0, np.int64)}, True,
                                       "The same decoder run for zero steps: empty tokens."),
    "skip_odd_script": (SkipOdd, {"x": rnd(7, 3)}, True,
                        "torch.jit.script: for with continue, an if on data, index "
                        "assignment into a preallocated tensor."),
    "running_max_script": (RunningMax, {"x": rnd(2, 6, 3)}, True,
                           "torch.jit.script: for over time steps, list append, stack."),
    "newton_while_script": (Refine, {"x": np.abs(rnd(3, 4)) + 0.5}, True,
                            "torch.jit.script: while loop with a data-dependent condition "
                            "and a step counter."),
}


#: exported by dynamo at opset 23 too (LayerNormalization, RMSNormalization, Attention forms)
NEWER_OPSET = ("transformer_encoder_layer", "causal_attention", "tiny_unet", "causal_decoder",
               "warp")


def export(name: str, module: nn.Module, feeds: dict, scripted: bool, dynamo: int | None,
           path: Path) -> None:
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    names = list(feeds)
    model = torch.jit.script(module) if scripted else module
    dyn = {n: {0: "batch"} for n, v in feeds.items() if np.ndim(v) > 0}
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        if dynamo:
            torch.onnx.export(model, args, str(path), dynamo=True, input_names=names,
                              opset_version=dynamo if dynamo > 1 else None,
                              dynamic_shapes={n: {0: torch.export.Dim("batch", max=64)}
                                              if n in dyn else None for n in names},
                              external_data=False)
        else:
            torch.onnx.export(model, args, str(path), dynamo=False, opset_version=17,
                              input_names=names, dynamic_axes=dyn)
    model = onnx.load(str(path))
    for graph in [model.graph, *(f for f in model.functions)]:
        _strip(graph)
    onnx.save(model, str(path))  # one file, no external data


def _strip(graph) -> None:
    """Drop the dynamo exporter's per-node source records (stack traces, scopes): they are
    most of a small file's bytes and change from run to run."""
    for n in graph.node:
        n.doc_string = ""
        del n.metadata_props[:]
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _strip(a.g)


def run_ort(path: Path, feeds: dict) -> list:
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def run_ov(path: Path, feeds: dict) -> list:
    compiled = ov.Core().compile_model(str(path), "CPU", OV_CONFIG)
    result = compiled(feeds)
    return [np.asarray(result[o]) for o in compiled.outputs]


def add(corpus: Corpus, name: str, factory, feeds: dict, scripted: bool, description: str,
        dynamo: int) -> str:
    """`dynamo`: 0 for the TorchScript exporter, 1 for dynamo at its default opset, else the
    opset dynamo is asked for."""
    torch.manual_seed(0)
    module = factory().eval()
    entry = f"{name}_" + ("op17" if not dynamo else "dynamo" if dynamo == 1 else
                          f"dynamo_op{dynamo}")
    path = corpus.path(entry, ".onnx")
    export(entry, module, feeds, scripted, dynamo, path)
    model = onnx.load(str(path))
    feeds = {i.name: feeds[i.name] for i in model.graph.input}
    want = [np.asarray(v) for v in run_ort(path, feeds)]
    with torch.no_grad():
        got = module(*(torch.from_numpy(v) for v in feeds.values()))
    got = [t.numpy() for t in (got if isinstance(got, tuple) else (got,))]
    peers = {"framework": compare(got, want, 1e-4, 1e-5)}
    try:
        peers["openvino"] = compare(run_ov(path, feeds), want, 1e-4, 1e-5)
    except Exception as e:  # noqa: BLE001 - a peer's refusal is recorded, not raised
        peers["openvino"] = "error: " + first_line(e)
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    exporter = "torch.onnx dynamo" if dynamo else "torch.onnx TorchScript (dynamo=False)"
    corpus.add(entry, path, feeds, want, converter=exporter, opset=opset,
               oracle="onnxruntime", rtol=1e-4, atol=1e-5,
               description=description + (" (torch.jit.script)" if scripted else ""),
               output_names=[o.name for o in model.graph.output], peer=peers)
    return f"{entry}: {peers}"


def main() -> None:
    import onnxscript

    versions = {"torch": torch.__version__, "onnxscript": onnxscript.__version__,
                "onnx": onnx.__version__, "onnxruntime": ort.__version__,
                "openvino": ov.__version__, "numpy": np.__version__}
    corpus = Corpus("torch-models", versions)
    for name, (factory, feeds, scripted, description) in CASES.items():
        for dynamo in (0, 1, 23):
            if dynamo and scripted or dynamo == 23 and name not in NEWER_OPSET:
                continue
            try:
                print(add(corpus, name, factory, feeds, scripted, description, dynamo))
            except Exception as e:  # noqa: BLE001 - an export that fails is reported
                print(f"{name} dynamo={dynamo}: left out: {first_line(e)}")
    corpus.save()
    print(f"\n{len(corpus.models)} torch-models entries")


if __name__ == "__main__":
    main()
