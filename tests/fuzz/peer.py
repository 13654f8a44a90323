"""The peer check of a campaign: every mutant that itergraph ran (verdict ``ok``) run again on
its peer, ONNX Runtime for an ONNX file and OpenVINO (f32) for an IR, to find what itergraph
accepts where the peer refuses it (``lenient``: a bug, or a leniency to document and test)
and what the two compute differently (``differs``).

    python -m tests.fuzz.peer OUT/results.jsonl [--verdict ok] > peer.jsonl

One JSON line per mutant with a peer outcome other than agreement, and other than its
unmutated seed's (a seed whose outputs differ from the peer's already, as the corpus
records): ``{"name", "desc", "peer": "lenient"|"differs", "msg"}``; a count on stderr at the
end. It runs in this process
(the mutants it replays ran cleanly once already), under a 6 GiB address-space cap.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from .mutants import Mutant, build
from .seeds import seed
from .verdicts import differ


def peer_outputs(path: Path, feeds: dict) -> dict:
    """The peer's outputs by name (raises what the peer raises)."""
    if path.suffix == ".onnx":
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.log_severity_level = 4
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        fed = {i.name: feeds[i.name] for i in sess.get_inputs() if i.name in feeds}
        return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, fed)))
    import openvino as ov

    cm = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    got = cm(feeds)
    out = {}
    for k, o in enumerate(cm.outputs):
        names = o.get_names()
        out[sorted(names)[0] if names else f"#{k}"] = np.asarray(got[o])
    return out


def check(spec: str, tmp: Path) -> dict | None:
    """The peer outcome of one mutant, None when the peer agrees."""
    import itergraph as ig

    m = Mutant.parse(spec)
    s = seed(m.seed_id)
    built = build(m, tmp)
    mine = ig.load(built.path).run(built.feeds, backend="numpy", max_iterations=1000)
    res = {"name": spec, "desc": built.description[:300]}
    try:
        theirs = peer_outputs(built.path, built.feeds)
    except Exception as e:  # noqa: BLE001 - any failure of the peer is a refusal
        return {**res, "peer": "lenient", "msg": f"{type(e).__name__}: {e}"[:600]}
    common = [k for k in mine if k in theirs]
    d = differ({k: mine[k] for k in common}, {k: theirs[k] for k in common},
               max(s.rtol, 1e-3), max(s.atol, 1e-4))
    return {**res, "peer": "differs", "msg": d} if d else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.peer",
                                description=__doc__.split("\n")[0])
    p.add_argument("results", type=Path)
    p.add_argument("--verdict", default="ok", help="the verdict of the mutants to check")
    a = p.parse_args(argv)
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    warnings.simplefilter("ignore")
    counts = {"lenient": 0, "differs": 0, "agrees": 0, "as the seed": 0}
    seeds: dict[str, str | None] = {}  # a seed's own peer outcome (None: it agrees)
    with tempfile.TemporaryDirectory(prefix="itergraph-peer-") as tmp:
        for line in a.results.read_text().splitlines():
            r = json.loads(line)
            if r.get("verdict") != a.verdict:
                continue
            sid = r["name"].split("|")[0]
            if sid.startswith("network/"):  # a network script has no peer to run it
                continue
            try:
                if sid not in seeds:
                    own = check(f"{sid}|none|0", Path(tmp) / "seed")
                    seeds[sid] = own["peer"] if own else None
                out = check(r["name"], Path(tmp) / "m")
            except Exception as e:  # noqa: BLE001 - itergraph's own run: the campaign's
                print(f"{r['name']}: itergraph failed here: {e}", file=sys.stderr)
                continue
            if out and out["peer"] == seeds[sid]:  # the unmutated seed does so already
                counts["as the seed"] += 1
                continue
            counts[out["peer"] if out else "agrees"] += 1
            if out:
                print(json.dumps(out), flush=True)
    print(counts, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
