"""Real-world corpus source ``ort-quant``: small PyTorch networks exported to ONNX, then
quantized by ONNX Runtime's own quantizer (``onnxruntime.quantization``), as a user shrinks a
model for CPU inference.

Run by hand from the repository root, in the environment of ``gen_torch.py`` (README.md)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_ort_quant.py

The float networks (``torch.onnx.export``, TorchScript exporter, opset 17): a two-layer MLP,
a CNN (convolutions, batch norm, a residual ``Add``, max and global average pooling,
``Concat``, ``Sigmoid``, ``LeakyRelu``), a GRU classifier over token embeddings, an LSTM
tagger, a transformer encoder layer, a dilated 1-D convolution stack, and a scripted
``for`` loop whose body holds ``Linear`` layers (a ``Loop`` with ``MatMul`` inside). Each
is quantized in the forms users pick:

- ``dyn``: ``quantize_dynamic`` (int8 weights): ``DynamicQuantizeLinear``,
  ``MatMulInteger``, ``ConvInteger``, ``DynamicQuantizeMatMul``, ``DynamicQuantizeLSTM``;
- ``dyn_u8pc``: the same with uint8 weights quantized per channel;
- ``qdq``: ``quantize_static`` in QDQ format (uint8 activations, int8 weights per
  channel), calibrated on a few random batches: ``QuantizeLinear`` / ``DequantizeLinear``
  pairs around float operators;
- ``qdq16``: QDQ with int16 activations (opset 21);
- ``nbits4``, ``nbits4sym``, ``nbits8``: ``MatMulNBitsQuantizer`` (weight-only, as int4 LLM
  exports are made): ``com.microsoft.MatMulNBits`` for every ``MatMul`` by a constant (not
  ``Gemm``: networks whose Linear layers export as ``Gemm`` are left out);
- ``qop``: ``quantize_static`` in QOperator format: ``QLinearConv``, ``QLinearMatMul``,
  ``QLinearAdd``, ``QLinearMul``, ``QLinearSigmoid``, ``QLinearConcat``, ``QGemm``,
  ``QLinearGlobalAveragePool``, ``QLinearLeakyRelu``, ... (ONNX's and ``com.microsoft``'s).

The stored outputs are ONNX Runtime's on the quantized file with its graph optimizations off
(``oracle="onnxruntime"``): the file as written, each quantized operator computed as the
standard says. ONNX Runtime's default optimizations fuse ``DequantizeLinear -> op ->
QuantizeLinear`` into integer kernels whose rounding differs by up to one quantization step;
the entry's ``atol`` admits that difference (measured here, recorded in the manifest as
``peer["onnxruntime-optimized"]``). ``peer["openvino"]`` records OpenVINO's own ONNX
frontend on the file.
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
import onnxruntime as ort  # noqa: E402
import openvino as ov  # noqa: E402
import torch  # noqa: E402
from onnxruntime.quantization import (  # noqa: E402
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_dynamic,
    quantize_static,
)
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer  # noqa: E402
from torch import Tensor, nn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402
from gen_torch_models import GruClassifier as Gru  # noqa: E402
from peer_record import run_peer  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")


class Mlp(nn.Module):
    """[B, 12] -> [B, 4]: Linear, ReLU, Linear, softmax."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(12, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x: Tensor) -> Tensor:
        return torch.softmax(self.b(torch.relu(self.a(x))), dim=-1)


class Cnn(nn.Module):
    """[B, 3, 12, 12] -> [B, 5]: a small residual CNN with the operators QOperator covers."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.c1 = nn.Conv2d(8, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 4, 1)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(12, 5)

    def forward(self, x: Tensor) -> Tensor:
        y = self.stem(x)
        y = self.pool(y + torch.relu(self.c1(y)))
        z = torch.cat([torch.sigmoid(self.c2(y)), nn.functional.leaky_relu(y, 0.1)], dim=1)
        return self.head(z.mean(dim=(2, 3)))


class Lstm(nn.Module):
    """[B, T, 5] -> per-step scores [B, T, 4] from a one-layer LSTM."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 8, batch_first=True)
        self.out = nn.Linear(8, 4)

    def forward(self, x: Tensor) -> Tensor:
        y, _ = self.lstm(x)
        return self.out(y)


class Encoder(nn.Module):
    """One ``TransformerEncoderLayer`` (d_model 16, 4 heads, GELU)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0,
                                                activation="gelu", batch_first=True)

    def forward(self, x: Tensor) -> Tensor:
        return self.layer(x)


class Temporal(nn.Module):
    """[B, 2, T] -> [B, 4, T]: dilated 1-D convolutions with a residual."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(2, 4, 3, dilation=2, padding=2)
        self.c2 = nn.Conv1d(4, 4, 3, padding=1)
        self.skip = nn.Conv1d(2, 4, 1)

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.c2(torch.relu(self.c1(x)))) + self.skip(x)


class LoopCell(nn.Module):
    """A scripted ``for`` over time: ``h = tanh(W x_t + U h)``, every state stacked."""

    def __init__(self):
        super().__init__()
        self.w = nn.Linear(4, 6)
        self.u = nn.Linear(6, 6, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.zeros(x.size(0), 6)
        hs: list[Tensor] = []
        for t in range(x.size(1)):
            h = torch.tanh(self.w(x[:, t]) + self.u(h))
            hs.append(h)
        return torch.stack(hs, 1)


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def ids(*shape, seed=0):
    return np.random.default_rng(seed).integers(0, 20, shape).astype(np.int64)


#: name -> (module factory, feed maker(seed), scripted, dynamic axes, description)
BASES = {
    "mlp": (Mlp, lambda s: {"x": rnd(3, 12, seed=s)}, False, {"x": {0: "batch"}},
            "two-layer MLP with softmax"),
    "cnn": (Cnn, lambda s: {"x": rnd(2, 3, 12, 12, seed=s)}, False, {},
            "residual CNN: conv, batch norm, add, max pool, concat, sigmoid, leaky relu, "
            "global average, linear"),
    "gru": (Gru, lambda s: {"ids": ids(2, 5, seed=s)}, False, {},
            "embedding, GRU, linear on the last state"),
    "lstm": (Lstm, lambda s: {"x": rnd(2, 6, 5, seed=s)}, False, {},
             "one-layer LSTM tagger"),
    "encoder": (Encoder, lambda s: {"x": rnd(2, 5, 16, seed=s)}, False, {},
                "transformer encoder layer: attention, layer norm, GELU"),
    "temporal": (Temporal, lambda s: {"x": rnd(2, 2, 20, seed=s)}, False, {},
                 "dilated 1-D convolutions with a residual"),
    "loop_cell": (LoopCell, lambda s: {"x": rnd(2, 5, 4, seed=s)}, True, {},
                  "torch.jit.script for loop over time with Linear layers in the body"),
}


class Reader(CalibrationDataReader):
    """Four random batches for calibration (other seeds than the stored feeds)."""

    def __init__(self, make):
        self.batches = iter([make(seed) for seed in range(1, 5)])

    def get_next(self):
        return next(self.batches, None)


def quantize(kind: str, src: Path, dst: Path, make) -> None:
    if kind == "dyn":
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8)
    elif kind == "dyn_u8pc":
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QUInt8, per_channel=True)
    elif kind == "qdq":
        quantize_static(str(src), str(dst), Reader(make), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        per_channel=True)
    elif kind == "qdq16":
        quantize_static(str(src), str(dst), Reader(make), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QInt16, weight_type=QuantType.QInt8,
                        extra_options={"ForceQuantizeNoInputCheck": True})
    elif kind.startswith("nbits"):
        bits, block, sym = {"nbits4": (4, 16, False), "nbits4sym": (4, 32, True),
                            "nbits8": (8, 16, False)}[kind]
        q = MatMulNBitsQuantizer(onnx.load(str(src)), bits=bits, block_size=block,
                                 is_symmetric=sym)
        q.process()
        q.model.save_model_to_file(str(dst))
        if not any(n.op_type == "MatMulNBits" for n in onnx.load(str(dst)).graph.node):
            dst.unlink()
            raise ValueError("no MatMul to quantize (Linear layers exported as Gemm)")
    elif kind == "qop":
        quantize_static(str(src), str(dst), Reader(make), quant_format=QuantFormat.QOperator,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    else:
        raise ValueError(kind)


KINDS = {"dyn": "quantize_dynamic, int8 weights",
         "dyn_u8pc": "quantize_dynamic, uint8 weights per channel",
         "qdq": "quantize_static QDQ, uint8 activations, int8 weights per channel",
         "qdq16": "quantize_static QDQ, int16 activations, int8 weights",
         "qop": "quantize_static QOperator, uint8 activations, int8 weights",
         "nbits4": "MatMulNBitsQuantizer, 4-bit weights in blocks of 16 with zero points",
         "nbits4sym": "MatMulNBitsQuantizer, symmetric 4-bit weights in blocks of 32",
         "nbits8": "MatMulNBitsQuantizer, 8-bit weights in blocks of 16"}


def export(module: nn.Module, feeds: dict, scripted: bool, dyn: dict, path: Path) -> None:
    model = torch.jit.script(module) if scripted else module
    names = list(feeds)
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    torch.onnx.export(model, args, str(path), dynamo=False, opset_version=17,
                      input_names=names, dynamic_axes=dyn or None)


def run_ort(path: Path, feeds: dict, optimized: bool) -> list[np.ndarray]:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    if not optimized:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in sess.run(None, feeds)]


def max_err(a: list, b: list) -> float:
    return max((float(np.abs(x.astype(np.float64) - y.astype(np.float64)).max())
                for x, y in zip(a, b) if x.size), default=0.0)


def _nodes(graph):
    """Every node of `graph`, loop and branch bodies included."""
    for n in graph.node:
        yield graph, n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _nodes(a.g)


def add(corpus: Corpus, base: str, kind: str, tmp: Path) -> str:
    factory, make, scripted, dyn, description = BASES[base]
    torch.manual_seed(0)
    module = factory().eval()
    feeds = make(0)
    src = tmp / f"{base}.onnx"
    if not src.exists():
        export(module, feeds, scripted, dyn, src)
    if kind.startswith("nbits") and not any(n.op_type == "MatMul" for _, n in
                                            _nodes(onnx.load(str(src)).graph)):
        raise ValueError("no MatMul to quantize (Linear layers exported as Gemm)")
    if kind == "qdq16":  # int16 QuantizeLinear needs opset 21
        model = onnx.load(str(src))
        model = onnx.version_converter.convert_version(model, 21)
        src = tmp / f"{base}_op21.onnx"
        onnx.save(model, str(src))
    entry = f"{base}_{kind}"
    path = corpus.path(entry, ".onnx")
    quantize(kind, src, path, make)
    model = onnx.load(str(path))
    feeds = {i.name: feeds[i.name] for i in model.graph.input}
    want = run_ort(path, feeds, optimized=False)
    fused = run_ort(path, feeds, optimized=True)
    spread = max_err(want, fused)
    atol = max(1e-5, 1.5 * spread)
    peers = {"onnxruntime-optimized": "ok" if spread <= 1e-5 else
             f"differs: max err {spread:.3g}",
             "openvino": run_peer("openvino", path, feeds, want, 1e-4, atol)}
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    ops = sorted({n.op_type for _, n in _nodes(model.graph)} - {"Constant"})
    corpus.add(entry, path, feeds, want, converter=f"onnxruntime.quantization ({KINDS[kind]})",
               opset=opset, oracle="onnxruntime", rtol=1e-4, atol=atol,
               tags=(kind,) + (("loop",) if scripted else ()),
               description=f"{description}; {KINDS[kind]}: {', '.join(ops)}",
               output_names=[o.name for o in model.graph.output], peer=peers)
    return f"{entry}: {peers}"


def main() -> None:
    versions = {"torch": torch.__version__, "onnx": onnx.__version__,
                "onnxruntime": ort.__version__, "openvino": ov.__version__,
                "numpy": np.__version__}
    corpus = Corpus("ort-quant", versions)
    with tempfile.TemporaryDirectory() as tmp:
        for base in BASES:
            for kind in KINDS:
                try:
                    print(add(corpus, base, kind, Path(tmp)), flush=True)
                except Exception as e:  # noqa: BLE001 - a quantizer that fails is reported
                    text = str(e).strip().splitlines()
                    print(f"{base}_{kind}: left out: {type(e).__name__}: "
                          f"{text[0][:200] if text else ''}", flush=True)
    corpus.save()
    print(f"\n{len(corpus.models)} ort-quant entries")


if __name__ == "__main__":
    main()
