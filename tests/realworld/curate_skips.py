"""Rewrite ``skips.json`` from a run of every corpus stage (by hand, after regenerating).

A stage goes on the list only when itergraph ends it with a clean `itergraph.Error` *and* the
peer that stage stands for failed on the converter's own file too, as its generator recorded
(``peer`` in the manifest): for ``convert`` and ``reload``, the target format's runtime and
converter (OpenVINO's ONNX frontend for ONNX files, ONNX Runtime for IR) refused the file or
computed a wrong result; for ``numpy`` and ``jax``, the file's own runtime refused it (an
exporter bug: the file is invalid). A ``convert`` stage whose written file the peer refuses
is listed too when the peer refused the converter's own file (the model is beyond the peer,
whoever writes it), and so is any later stage of an entry whose ``numpy`` stage is listed (the
file is invalid; what is written from it cannot be right). Every other failure stays a
failure. Run from the
repository root (naming sources re-curates only their entries)::

    .venv/bin/python tests/realworld/curate_skips.py [source ...]
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import corpus  # noqa: E402
import stages  # noqa: E402
from peers import PeerError  # noqa: E402

import itergraph as ig  # noqa: E402

RUNTIME = {"openvino": "openvino", "onnx": "onnxruntime"}


def peer_of(entry: corpus.Entry, stage: str) -> str:
    return RUNTIME[entry.format if stage in ("numpy", "jax") else entry.target]


def main() -> None:
    warnings.filterwarnings("ignore")
    sources = sys.argv[1:]  # only these sources' entries (the others' lines are kept)
    skips: dict[str, dict[str, str]] = {}
    if sources:
        skips = {k: v for k, v in corpus.skips().items()
                 if all(e.source not in sources for e in corpus.entries() if e.id == k)}
    for entry in (corpus.entries_of(*sources) if sources else corpus.entries()):
        for stage in corpus.STAGES:
            peer = peer_of(entry, stage)
            peer_said = dict(entry.peer).get(peer, "")
            try:
                stages.RUN[stage](entry)
            except Exception as e:  # noqa: BLE001 - sorted out below
                refused = peer_said.startswith("error")
                invalid = "numpy" in skips.get(entry.id, {})  # later stages inherit it
                if not (invalid or isinstance(e, ig.Error | PeerError)):
                    continue  # a real failure: the test reports it
                if not (refused or invalid or
                        isinstance(e, ig.Error) and peer_said.startswith("mismatch")):
                    continue
                ours = f"{type(e).__name__}: {str(e).strip().splitlines()[0]}"
                skips.setdefault(entry.id, {})[stage] = \
                    f"itergraph: {ours} | {peer} on the converter's own file: {peer_said}"
    corpus.SKIPS_FILE.write_text(json.dumps(skips, indent=1, sort_keys=True) + "\n")
    print(f"{sum(map(len, skips.values()))} stage(s) of {len(skips)} entries listed")


if __name__ == "__main__":
    main()
