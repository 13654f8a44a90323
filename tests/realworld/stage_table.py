"""Run every corpus stage of the given sources and print a pass / fail table (by hand).

    PYTHONPATH=src python tests/realworld/stage_table.py torch-unseen [-v]

Stages are `corpus.STAGES` plus ``roundtrip`` (`stages.run_roundtrip`, ONNX entries only):
the written IR loaded and written back to ONNX by itergraph, run by ONNX Runtime. A stage
listed in ``skips.json`` that ends in its expected error counts as ``skip`` (``roundtrip``:
when its ``convert`` stage is listed).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import corpus  # noqa: E402
import stages  # noqa: E402


def roundtrip(entry: corpus.Entry) -> None:
    stages.run_roundtrip(entry, stages._WORK)


RUN = dict(stages.RUN, roundtrip=roundtrip)


def _skipped(entry: corpus.Entry, stage: str) -> bool:
    if stage == "roundtrip":
        return stages.roundtrip_skipped(entry)
    return corpus.skip_reason(entry, stage) is not None


def main() -> None:
    warnings.filterwarnings("ignore")
    verbose = "-v" in sys.argv
    sources = [a for a in sys.argv[1:] if not a.startswith("-")]
    counts = {s: {"pass": 0, "fail": 0, "skip": 0} for s in RUN}
    for entry in corpus.entries_of(*sources):
        row = []
        for stage, fn in RUN.items():
            if stage == "roundtrip" and entry.format != "onnx":
                row.append(f"{stage}=n/a")
                continue
            try:
                if stage in stages.RUN:
                    stages.run_stage(entry, stage)
                else:
                    fn(entry)
                res = "skip" if _skipped(entry, stage) else "pass"
            except BaseException as e:  # noqa: BLE001
                if isinstance(e, KeyboardInterrupt):
                    raise
                res = "fail"
                if verbose:
                    text = str(e).strip()
                    msg = f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"
                    print(f"    {entry.id}:{stage}: {msg[:400]}", flush=True)
            counts[stage][res] += 1
            row.append(f"{stage}={res}")
        print(f"{entry.id}: {' '.join(row)}", flush=True)
    print("\nstage      pass fail skip")
    for stage, c in counts.items():
        print(f"{stage:10s} {c['pass']:4d} {c['fail']:4d} {c['skip']:4d}")


if __name__ == "__main__":
    main()
