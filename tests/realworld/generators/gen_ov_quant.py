"""Real-world corpus source ``ov-quant``: OpenVINO IR that OpenVINO's own converter writes from
the quantized, fused and float16 ONNX files of ``gen_ort_quant.py`` and ``gen_ort_fused.py``
(``ov.convert_model`` on the ONNX file, ``ov.save_model`` with its default
``compress_to_fp16=True``): the IR a user gets from ``ovc model.onnx``, with ``FakeQuantize``
for the quantized operators, float16-compressed weights and OpenVINO's own decompositions
of ONNX Runtime's fused operators.

Run by hand from the repository root after those two generators, in the environment of
``gen_torch.py`` (only OpenVINO and ONNX Runtime are needed)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_ov_quant.py

Only files OpenVINO's ONNX frontend ran to ONNX Runtime's outputs are converted (their
manifest's ``peer["openvino"]`` is ``ok``), one or two of each form (`KEEP`). The stored
outputs are OpenVINO's on the IR (``oracle="openvino"``, f32 inference precision): float16
weights move them off ONNX Runtime's on the ONNX file, by as much as
``peer["onnxruntime-on-the-onnx-file"]`` records; ``atol`` admits 1.5 times that spread (one
quantization step where a rounding moves), at least 1e-4 and at least the ONNX entry's own
tolerances (1e-2 for the float16 models).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import ROOT, Corpus  # noqa: E402
from peer_record import message  # noqa: E402

warnings.filterwarnings("ignore")
SOURCES = ("ort-quant", "ort-fused", "fp16")
# one entry per form OpenVINO's converter writes differently (the test suite's time is kept
# short: a quantized IR's convert stage takes seconds)
KEEP = {"ort-quant/mlp_dyn", "ort-quant/cnn_dyn", "ort-quant/cnn_dyn_u8pc", "ort-quant/cnn_qdq",
        "ort-quant/gru_dyn", "ort-quant/gru_qdq16", "ort-quant/lstm_qdq",
        "ort-quant/lstm_nbits4", "ort-quant/encoder_dyn", "ort-quant/encoder_qdq",
        "ort-quant/encoder_nbits8", "ort-quant/temporal_dyn", "ort-quant/temporal_qdq",
        "ort-quant/loop_cell_qdq", "ort-quant/loop_cell_qop", "ort-fused/bert",
        "ort-fused/bert_mha", "ort-fused/distilbert", "ort-fused/gpt2", "ort-fused/vit",
        "ort-fused/t5_encoder", "fp16/bert_fused", "fp16/gpt2_fused", "fp16/lstm",
        "fp16/cnn_fp16io", "fp16/gru"}
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}


def run_ov(path: Path, feeds: dict) -> list[np.ndarray]:
    compiled = ov.Core().compile_model(str(path), "CPU", OV_CONFIG)
    result = compiled(feeds)
    return [np.asarray(result[o]) for o in compiled.outputs]


def add(corpus: Corpus, m: dict) -> str:
    name = f"{m['source']}__{m['name']}"
    data = np.load(ROOT / m["data"])
    feeds = {n: data[f"in{i}"] for i, n in enumerate(m["inputs"])}
    ort_out = [data[k] for k in sorted((k for k in data.files if k.startswith("out")),
                                       key=lambda k: int(k[3:]))]
    model = ov.convert_model(str(ROOT / m["file"]))
    path = corpus.path(name, ".xml")
    ov.save_model(model, str(path))  # compress_to_fp16=True, the default
    want = run_ov(path, feeds)
    spread = max((float(np.abs(w.astype(np.float64) - o.astype(np.float64)).max())
                  for w, o in zip(want, ort_out) if w.shape == o.shape and w.size), default=0.0)
    corpus.add(name, path, feeds, want, converter=f"OpenVINO {ov.__version__} ONNX frontend "
               f"(ov.convert_model, ov.save_model compress_to_fp16) on {m['id']}", opset=None,
               oracle="openvino", rtol=max(1e-4, m["rtol"]),
               atol=max(1e-4, m["atol"], 1.5 * spread),
               tags=tuple(m.get("tags", ())),
               description=f"{m['id']} through OpenVINO's converter: {m['description']}"[:600],
               peer={"openvino": "ok", "onnxruntime-on-the-onnx-file": f"max err {spread:.3g}"})
    return f"{name}: spread {spread:.3g}"


def main() -> None:
    corpus = Corpus("ov-quant", {"openvino": ov.__version__, "numpy": np.__version__})
    for source in SOURCES:
        for m in json.loads((ROOT / f"manifest-{source}.json").read_text())["models"]:
            if m["peer"].get("openvino") != "ok" or m["id"] not in KEEP:
                continue
            try:
                print(add(corpus, m), flush=True)
            except Exception as e:  # noqa: BLE001 - a conversion that fails is reported
                print(f"{m['id']}: left out: {message(e)}", flush=True)
    corpus.save()
    corpus.prune()
    print(f"\n{len(corpus.models)} ov-quant entries")


if __name__ == "__main__":
    main()
