"""Rewrite ``skips.json`` from a run of every corpus stage (by hand, after regenerating).

A stage goes on the list only when itergraph refuses it with `UnsupportedError` *and* the
target format's own converter refused the original file too, as its generator recorded
(``peer`` in the manifest: OpenVINO's ONNX frontend for ONNX files, ONNX Runtime for IR).
Every other failure stays a failure. Run from the repository root::

    .venv/bin/python tests/realworld/curate_skips.py
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import corpus  # noqa: E402
import stages  # noqa: E402

import itergraph as ig  # noqa: E402

PEER_OF_TARGET = {"openvino": "openvino", "onnx": "onnxruntime"}


def main() -> None:
    warnings.filterwarnings("ignore")
    skips: dict[str, dict[str, str]] = {}
    for entry in corpus.entries():
        peer = PEER_OF_TARGET[entry.target]
        peer_said = dict(entry.peer).get(peer, "")
        for stage in ("convert", "reload"):
            try:
                stages.RUN[stage](entry)
            except ig.UnsupportedError as e:
                if not peer_said.startswith("error"):
                    continue
                ours = str(e).strip().splitlines()[0]
                skips.setdefault(entry.id, {})[stage] = \
                    f"itergraph: {ours} | {peer} on the converter's own file: {peer_said}"
            except Exception:  # noqa: BLE001 - a real failure: the test reports it
                pass
    corpus.SKIPS_FILE.write_text(json.dumps(skips, indent=1, sort_keys=True) + "\n")
    print(f"{sum(map(len, skips.values()))} stage(s) of {len(skips)} entries listed")


if __name__ == "__main__":
    main()
