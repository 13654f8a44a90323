"""Hugging Face ``transformers`` architectures converted to OpenVINO IR by OpenVINO's own
PyTorch frontend (source ``hf-ov``): ``ov.convert_model`` on the eager module, saved with
``compress_to_fp16=False``; the IR OpenVINO users hold, read by itergraph and written to ONNX
for ONNX Runtime.

Run by hand from the repository root, in the environment of ``gen_hf.py`` (README.md)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_hf_ov.py

The models are ``gen_hf.py``'s (tiny configurations, random weights, one layer), text
decoders and encoders with ``sdpa`` attention (which OpenVINO's frontend writes as
``ScaledDotProductAttention-13``) and others with eager attention, an encoder-decoder, vision
and speech backbones. Batch and sequence axes are dynamic in the IR. The stored outputs are
the model's own (``last_hidden_state``); the manifest records how OpenVINO fares on the IR.
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
import openvino as ov  # noqa: E402
import torch  # noqa: E402
import transformers as tf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402
from gen_hf import ARCHS, Hidden, feeds_of  # noqa: E402
from peer_record import run_peer  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")
RTOL, ATOL = 1e-4, 1e-4
#: name -> attention implementation
MODELS = {"bert": "sdpa", "llama": "sdpa", "gpt2": "sdpa", "qwen3": "sdpa", "phi": "eager",
          "bloom": "eager", "t5": "eager", "whisper": "sdpa", "deberta_v2": "eager",
          "vit": "sdpa", "swin": "eager", "wav2vec2": "eager", "gemma": "sdpa",
          "falcon": "eager", "gpt_neox": "sdpa"}


def add(corpus: Corpus, name: str) -> str:
    factory, kind, about = ARCHS[name]
    attn = MODELS[name]
    torch.manual_seed(0)
    feeds = feeds_of(kind)
    wrapped = Hidden(factory(attn).eval(), list(feeds)).eval()
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    with torch.no_grad():
        want = [wrapped(*args).numpy()]
    shapes = [ov.PartialShape([-1] + list(v.shape[1:])) if kind.startswith("pixels")
              else ov.PartialShape([-1, -1] + list(v.shape[2:])) for v in feeds.values()]
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        model = ov.convert_model(wrapped, example_input=args, input=shapes)
    entry = f"{name}_{attn}_ptfe"
    path = corpus.path(entry, ".xml")
    ov.save_model(model, str(path), compress_to_fp16=False)
    use = dict(zip([p.get_any_name() for p in model.inputs], feeds.values()))
    peer = {"openvino": run_peer("openvino", path, use, want, RTOL, ATOL)}
    ops = sorted({op.get_type_name() for op in model.get_ordered_ops()}
                 - {"Parameter", "Result", "Constant"})
    corpus.add(entry, path, use, want, converter=f"OpenVINO {ov.__version__} PyTorch frontend "
               "(ov.convert_model on the eager module)", opset=None, rtol=RTOL, atol=ATOL,
               tags=("transformers", kind),
               description=f"{about}; {attn} attention: {', '.join(ops)}"[:600], peer=peer)
    return f"hf-ov/{entry}: {peer}"


def main() -> None:
    versions = {"torch": torch.__version__, "transformers": tf.__version__,
                "openvino": ov.__version__, "numpy": np.__version__,
                "converter": f"openvino {ov.__version__}"}
    corpus = Corpus("hf-ov", versions)
    only = set(sys.argv[1:])
    for name in MODELS:
        if only and name not in only:
            continue
        try:
            print(add(corpus, name), flush=True)
        except Exception as e:  # noqa: BLE001 - a conversion that fails is reported
            text = str(e).strip().splitlines()
            print(f"{name}: left out: {type(e).__name__}: {text[0][:200] if text else ''}",
                  flush=True)
    corpus.save()
    print(f"{len(corpus.models)} hf-ov entries")


if __name__ == "__main__":
    main()
