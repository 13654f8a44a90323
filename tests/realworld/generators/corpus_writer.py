"""Writes entries of the real-world corpus; shared by every generator, needs only numpy.

Each generator runs by hand in its own environment (torch, tensorflow, scikit-learn) and calls

    corpus = Corpus("torch", versions={"torch": torch.__version__, ...})
    corpus.add("for_range_opset11", "models/torch/for_range_opset11.onnx", feeds, outputs, ...)
    corpus.save()

which writes ``models/<source>/<name>.npz`` (feeds ``in0, in1, ...`` and expected outputs
``out0, out1, ...`` in the model's order) and ``manifest-<source>.json`` beside this folder's
parent: one manifest per generator, so generators run in different environments never
overwrite each other's entries. ``tests/realworld/test_corpus.py`` reads every manifest.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FORMATS = {".onnx": "onnx", ".xml": "openvino"}
ORACLES = ("framework", "onnxruntime", "openvino")


class Corpus:
    """The entries one generator writes, kept in memory until ``save``."""

    def __init__(self, source: str, versions: dict[str, str]):
        self.source = source
        self.versions = dict(versions)
        self.models: list[dict] = []
        self.folder = ROOT / "models" / source
        if self.folder.exists():
            shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True)

    def path(self, name: str, suffix: str) -> Path:
        """Where the generator should write the model file ``name`` (``.onnx`` or ``.xml``)."""
        return self.folder / f"{name}{suffix}"

    def add(self, name: str, model_file: Path, feeds: dict[str, np.ndarray],
            outputs: list[np.ndarray], *, converter: str, opset: int | None,
            oracle: str = "framework", rtol: float = 1e-4, atol: float = 1e-5,
            tags: tuple[str, ...] = (), description: str = "",
            output_names: list[str] | None = None, peer: dict | None = None) -> None:
        """Record one model: ``feeds`` by input name, ``outputs`` in the model's output order.

        ``oracle`` says who computed ``outputs`` (the framework itself unless it cannot run
        the case); ``peer`` records how the file's own runtime and OpenVINO's/ORT's converter
        fared on the original, e.g. ``{"onnxruntime": "ok", "openvino": "error: ..."}``.
        """
        model_file = Path(model_file)
        if model_file.suffix not in FORMATS:
            raise ValueError(f"{model_file}: not an .onnx or .xml file")
        if not model_file.exists():
            raise FileNotFoundError(model_file)
        if oracle not in ORACLES:
            raise ValueError(f"oracle {oracle!r} not in {ORACLES}")
        if any(m["name"] == name for m in self.models):
            raise ValueError(f"duplicate corpus entry {name!r}")
        data = self.folder / f"{name}.npz"
        arrays = {f"in{i}": np.asarray(v) for i, v in enumerate(feeds.values())}
        arrays.update({f"out{i}": np.asarray(v) for i, v in enumerate(outputs)})
        np.savez_compressed(data, **arrays)
        self.models.append({
            "id": f"{self.source}/{name}",
            "name": name,
            "source": self.source,
            "converter": converter,
            "format": FORMATS[model_file.suffix],
            "file": model_file.relative_to(ROOT).as_posix(),
            "data": data.relative_to(ROOT).as_posix(),
            "inputs": list(feeds),
            "outputs": output_names,
            "opset": opset,
            "oracle": oracle,
            "rtol": rtol,
            "atol": atol,
            "tags": list(tags),
            "description": description,
            "peer": peer or {},
        })

    def prune(self) -> None:
        """Delete the files of ``folder`` that no entry names (a converter's output that was
        left out because its own runtime refused it)."""
        kept = {ROOT / m[k] for m in self.models for k in ("file", "data")}
        kept |= {p.with_suffix(".bin") for p in kept if p.suffix == ".xml"}
        for p in self.folder.iterdir():
            if p not in kept:
                p.unlink()

    def save(self) -> Path:
        out = ROOT / f"manifest-{self.source}.json"
        out.write_text(json.dumps({"source": self.source, "versions": self.versions,
                                   "models": self.models}, indent=1) + "\n")
        return out
