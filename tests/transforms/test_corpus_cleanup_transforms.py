"""The transforms of this area over a sample of the real-world corpus (every 5th entry of the
torch and tf sources, ONNX and OpenVINO IR): outputs still equal the framework's."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realworld"))
from corpus import entries_of, skip_reason  # noqa: E402
from peers import PEERS, PeerError  # noqa: E402
from stages import assert_outputs  # noqa: E402

import itergraph as ig  # noqa: E402
from itergraph.ir import Loop  # noqa: E402
from itergraph.ir.clone import clone_graph  # noqa: E402
from itergraph.ir.graph import Node, Value  # noqa: E402
from itergraph.transforms import TRANSFORMS, optimize  # noqa: E402
from itergraph.transforms.step_model import run_steps  # noqa: E402

SAMPLE = [e for e in entries_of("torch", "tf", "torch-ov", "tf-ov")[::5]
          if skip_reason(e, "numpy") is None]
PASSES = ["dead-ports", "fold-trip-count", "inline-if", "infer-shapes"]
CASES = [pytest.param(e, p, id=f"{e.id}:{p}") for e in SAMPLE for p in PASSES]


@pytest.mark.parametrize(("entry", "name"), CASES)
def test_outputs_equal_the_frameworks(entry, name):
    model = ig.load(entry.file)
    out = optimize(model, [name])
    assert_outputs(list(out.run(entry.feeds()).values()), entry, f"{name}, itergraph numpy")
    again = TRANSFORMS[name].build(None)(clone_graph(out.graph))
    if name != "infer-shapes":
        assert again == 0, "a second run still finds work"


@pytest.mark.parametrize("entry", SAMPLE, ids=[e.id for e in SAMPLE])
def test_inferred_types_keep_the_peers_outputs(entry, tmp_path):
    """The file written after infer-shapes (value_info, port dims) runs in its own format's
    runtime to the framework's outputs; where that runtime refuses the file written without
    them as well, it refuses this one too."""
    model = ig.load(entry.file)
    typed = optimize(model, ["infer-shapes"])
    peer = "onnxruntime" if entry.format == "onnx" else "openvino"
    suffix = ".onnx" if entry.format == "onnx" else ".xml"
    try:
        ig.save(model, tmp_path / f"plain{suffix}")
        plain = PEERS.run(peer, tmp_path / f"plain{suffix}", entry.feeds())
    except (PeerError, ig.Error):
        plain = None
    path = tmp_path / f"typed{suffix}"
    if plain is None:
        with pytest.raises((PeerError, ig.Error)):
            ig.save(typed, path)
            PEERS.run(peer, path, entry.feeds())
        return
    ig.save(typed, path)
    got = PEERS.run(peer, path, entry.feeds())
    assert_outputs(got, entry, f"{peer} after infer-shapes", exact_dtype=False,
                   peer_error=entry.peer_error(peer))


def _loop_oracle(model: ig.Model, loop: Loop, feeds: dict) -> dict:
    """The loop's outputs as the whole model computes them (itergraph, NumPy backend)."""
    mapping: dict[int, Value] = {}
    g = clone_graph(model.graph, mapping)
    g.outputs = []
    for v in loop.outputs:
        o = Value(v.name, v.type)
        g.nodes.append(Node("Identity", [mapping[v.uid]], [o], version=1))
        g.outputs.append(o)
    return dict(zip([v.name for v in loop.outputs],
                    ig.Model(g, model.source).run(feeds).values(), strict=True))


STEP = [e for e in SAMPLE if e.format == "onnx"]


@pytest.mark.parametrize("entry", STEP, ids=[e.id for e in STEP])
def test_step_model_reproduces_the_loop(entry):
    model = ig.load(entry.file)
    top = [n for n in model.graph.nodes if isinstance(n, Loop)]
    if len(top) != 1:
        with pytest.raises(ig.InputError, match="top-level loops"):
            optimize(model, ["step-model"])
        return
    feeds = entry.feeds()
    want = _loop_oracle(model, top[0], feeds)
    got = run_steps(model, feeds)
    for k, w in want.items():
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(np.asarray(got[k]), w, rtol=max(entry.rtol, 1e-5),
                                       atol=max(entry.atol, 1e-5), err_msg=k)
