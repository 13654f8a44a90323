"""Every ONNX corpus entry written as OpenVINO IR with its input shapes fixed to its feeds'
(``itergraph convert --input-shapes``, `Model.with_input_shapes`), run by OpenVINO, compared
with the framework's outputs. By hand (a few minutes); the suite's ``convert`` stage writes
the files with their shapes left dynamic. Prints the counts and every entry that is not ok::

    .venv/bin/python tests/realworld/measure_fixed_shapes.py [source ...]
"""

from __future__ import annotations

import collections
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np


def main(sources: list[str]) -> int:
    import corpus
    import stages
    from peers import PEERS

    import itergraph as ig

    warnings.simplefilter("ignore")
    work = Path(tempfile.mkdtemp(prefix="itergraph-fixed-"))
    counts: collections.Counter = collections.Counter()
    notes = []
    for e in corpus.entries():
        if e.format != "onnx" or (sources and e.source not in sources):
            continue
        if corpus.skip_reason(e, "convert"):
            counts["listed in skips.json"] += 1
            continue
        feeds = e.feeds()
        path = work / (e.id.replace("/", "__") + ".xml")
        try:
            ig.save(ig.load(e.file).with_input_shapes(
                {k: np.shape(v) for k, v in feeds.items()}), path)
        except ig.Error as x:
            counts["refused"] += 1
            notes.append((e.id, "refused", str(x)))
            continue
        try:
            got = PEERS.run("openvino", path, feeds)
            stages.assert_outputs(got, e, "OpenVINO", exact_dtype=False,
                                  peer_error=e.peer_error("openvino"))
            counts["same outputs"] += 1
        except AssertionError as x:
            counts["OTHER OUTPUTS"] += 1
            notes.append((e.id, "other outputs", str(x)))
        except Exception as x:  # OpenVINO's failure, reported as found
            counts["OpenVINO fails"] += 1
            notes.append((e.id, "OpenVINO fails", str(x).splitlines()[0] if str(x) else repr(x)))
    for k, n in counts.items():
        print(f"{k}: {n}")
    for entry, kind, why in notes:
        print(f"{entry}: {kind}: {why[:300]}")
    return 1 if counts["OTHER OUTPUTS"] or counts["OpenVINO fails"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
