"""The seed models: every entry of the real-world corpus (ONNX files and OpenVINO IR from
PyTorch, TensorFlow, Keras and scikit-learn converters, with the feeds recorded next to them)
the shipped silero VAD model (feeds made up here), and networks built through the
TensorRT-style API (`mutate_network.SEEDS`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from . import TESTS


@dataclass(frozen=True)
class Seed:
    id: str
    format: str  # "onnx", "openvino" or "network" (a script of network API calls)
    file: Path  # .onnx or .xml (the .bin next to it); a network's: a name only
    _feeds: object
    rtol: float = 0.0  # the corpus entry's tolerances: outputs this close are the same
    atol: float = 0.0

    def feeds(self) -> dict[str, np.ndarray]:
        return self._feeds()

    @property
    def weights(self) -> Path | None:
        """The IR's ``.bin`` (None for ONNX, or an IR without one)."""
        b = self.file.with_suffix(".bin")
        return b if self.format == "openvino" and b.exists() else None


def _silero_feeds() -> dict[str, np.ndarray]:
    x = (np.random.default_rng(0).standard_normal((1, 512)) * 0.1).astype(np.float32)
    return {"input": x, "state": np.zeros((2, 1, 128), np.float32),
            "sr": np.array(16000, np.int64)}


@cache
def seeds() -> tuple[Seed, ...]:
    """All seeds, in a fixed order (a mutant names its seed by id)."""
    import corpus

    from .mutate_network import SEEDS, seed_script

    out = [Seed(e.id, e.format, e.file, e.feeds, e.rtol, e.atol) for e in corpus.entries()]
    out += [Seed(k, "network", Path(f"{k}.netpkl"), lambda k=k: seed_script(k).feeds,
                 1e-5, 1e-6) for k in SEEDS]
    silero = TESTS / "realworld" / "models" / "shipped" / "silero_vad_16k_op15.onnx"
    if silero.exists():
        out.append(Seed("shipped/silero_vad_16k_op15", "onnx", silero, _silero_feeds))
    return tuple(sorted(out, key=lambda s: s.id))


def seed(seed_id: str) -> Seed:
    for s in seeds():
        if s.id == seed_id:
            return s
    raise KeyError(f"no seed {seed_id!r}")
