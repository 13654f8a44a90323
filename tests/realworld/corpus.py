"""The real-world corpus: its entries (from every ``manifest-*.json``), their feeds and
expected outputs, the stage skip list, and the stages each entry goes through.

Stages, in order, for an entry whose file is ONNX (an OpenVINO IR entry mirrors it):

- ``numpy``: ``ig.load(file).run(feeds)`` equals the framework's outputs;
- ``jax``: the same on the JAX backend;
- ``convert``: ``ig.save`` writes the other format (IR for ONNX, ONNX for IR), and the
  other format's own runtime (OpenVINO, ONNX Runtime; in a child process, `peers`) computes
  the framework's outputs from it; an ONNX file must also pass ``onnx.checker``'s full check;
- ``reload``: ``ig.load`` of the written file runs (numpy) to the same outputs.

``skips.json`` lists ``{"<entry id>": {"<stage>": "<reason>"}}``: a stage that itergraph
refuses with a clean `itergraph.Error` and that the peer fails too (its own converter refuses
the construct or computes a wrong result, or the file is invalid: an exporter bug that ONNX
Runtime refuses as well). A listed stage must still end in that error (so the list cannot
hide a stage that works); `curate_skips` writes the list, with the reasons.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).parent
STAGES = ("numpy", "jax", "convert", "reload")
SKIPS_FILE = ROOT / "skips.json"


@dataclass(frozen=True)
class Entry:
    id: str
    source: str
    format: str
    file: Path
    data: Path
    inputs: tuple[str, ...]
    oracle: str
    rtol: float
    atol: float
    description: str
    peer: tuple[tuple[str, str], ...] = ()

    def peer_error(self, peer: str) -> float:
        """The largest error `peer` makes on the converter's own file, as its generator
        recorded it (``"mismatch: ... max err X"``): OpenVINO computes float64 models in
        float32, on the original file as on the written one. 0 when it matched."""
        found = re.search(r"max err ([0-9.eE+-]+)", dict(self.peer).get(peer, ""))
        return 1.5 * float(found.group(1)) if found else 0.0

    @property
    def target(self) -> str:
        """The format `convert` writes."""
        return "openvino" if self.format == "onnx" else "onnx"

    def feeds(self) -> dict[str, np.ndarray]:
        with np.load(self.data) as z:
            return {name: z[f"in{i}"] for i, name in enumerate(self.inputs)}

    def expected(self) -> list[np.ndarray]:
        with np.load(self.data) as z:
            n = sum(1 for k in z.files if k.startswith("out"))
            return [z[f"out{i}"] for i in range(n)]


@cache
def entries() -> tuple[Entry, ...]:
    out = []
    for manifest in sorted(ROOT.glob("manifest-*.json")):
        for m in json.loads(manifest.read_text())["models"]:
            out.append(Entry(m["id"], m["source"], m["format"], ROOT / m["file"],
                             ROOT / m["data"], tuple(m["inputs"]), m["oracle"], m["rtol"],
                             m["atol"], m.get("description", ""),
                             tuple(sorted(m.get("peer", {}).items()))))
    return tuple(out)


def entries_of(*sources: str) -> list[Entry]:
    return [e for e in entries() if e.source in sources]


@cache
def skips() -> dict[str, dict[str, str]]:
    return json.loads(SKIPS_FILE.read_text()) if SKIPS_FILE.exists() else {}


def skip_reason(entry: Entry, stage: str) -> str | None:
    return skips().get(entry.id, {}).get(stage)


def versions() -> dict[str, dict[str, str]]:
    return {json.loads(p.read_text())["source"]: json.loads(p.read_text())["versions"]
            for p in sorted(ROOT.glob("manifest-*.json"))}
