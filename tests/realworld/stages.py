"""The stages of one corpus entry (`corpus.STAGES`), as parametrized tests.

Each ``test_corpus_*.py`` file holds ``test_stage = stage_tests(<sources>)``. An entry's stages
run in order in one test worker (``--dist loadfile``) and share what earlier stages built: the
loaded model and the written file, cached here per entry.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from corpus import STAGES, Entry, entries_of, skip_reason
from peers import PEERS, PeerError

import itergraph as ig

_WORK = Path(tempfile.mkdtemp(prefix="itergraph-corpus-"))
atexit.register(shutil.rmtree, _WORK, True)
_loaded: dict[str, object] = {}
_written: dict[str, object] = {}


def _remember(cache: dict, key: str, make):
    """`make()`, once per key; an exception is remembered and raised again."""
    if key not in cache:
        try:
            cache[key] = make()
        except Exception as e:
            cache[key] = e
    value = cache[key]
    if isinstance(value, Exception):
        raise value
    return value


def loaded(entry: Entry) -> ig.Model:
    return _remember(_loaded, entry.id, lambda: ig.load(entry.file))


def written(entry: Entry) -> Path:
    """The entry converted by ``ig.save`` to its target format (ONNX files fully checked)."""
    def write():
        suffix = ".xml" if entry.target == "openvino" else ".onnx"
        path = _WORK / (entry.id.replace("/", "__") + suffix)
        ig.save(loaded(entry), path)
        if suffix == ".onnx":
            onnx.checker.check_model(str(path), full_check=True)
        return path
    return _remember(_written, entry.id, write)


def assert_outputs(got: list, entry: Entry, what: str, exact_dtype: bool = True,
                   loose: bool = False, peer_error: float = 0.0) -> None:
    """`got` equals the entry's expected outputs: shapes, dtypes (or only their kind), and
    values within the entry's tolerances (`loose`: at least 1e-4; `peer_error`: at least the
    error the peer makes on the converter's own file)."""
    want = entry.expected()
    assert len(got) == len(want), f"{what}: {len(got)} outputs, expected {len(want)}"
    rtol, atol = (max(entry.rtol, 1e-4), max(entry.atol, 1e-4)) if loose \
        else (entry.rtol, entry.atol)
    atol = max(atol, peer_error)
    for i, (g, w) in enumerate(zip(got, want)):
        g = _as_array(g)
        label = f"{what}, output {i}"
        assert g.shape == w.shape, f"{label}: shape {g.shape}, expected {w.shape}"
        if w.dtype.kind == "U":  # the framework's str labels; ONNX strings are objects
            assert g.dtype.kind in "OU", f"{label}: dtype {g.dtype}, expected strings"
            np.testing.assert_array_equal(g.astype(str), w, err_msg=label)
            continue
        if exact_dtype:
            assert g.dtype == w.dtype, f"{label}: dtype {g.dtype}, expected {w.dtype}"
        else:
            assert g.dtype.kind == w.dtype.kind, f"{label}: dtype {g.dtype}, expected {w.dtype}"
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=label)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=label)


def _as_array(value) -> np.ndarray:
    """A tensor as it is; a sequence of maps (``ZipMap``: one ``{label: score}`` per row) as
    the ``[rows, labels]`` array the framework's ``predict_proba`` gives."""
    if isinstance(value, list) and value and all(isinstance(d, dict) for d in value):
        return np.array([list(d.values()) for d in value], np.float32)
    return np.asarray(value)


def _numpy(entry: Entry) -> None:
    got = loaded(entry).run(entry.feeds())
    assert_outputs(list(got.values()), entry, "itergraph numpy")


def _jax(entry: Entry) -> None:
    model = loaded(entry)
    got = model.run(entry.feeds(), backend="jax")
    assert_outputs(list(got.values()), entry, "itergraph jax", loose=True)
    _explain_told_the_truth(model)


def _explain_told_the_truth(model) -> None:
    """Where `explain` says everything compiles with XLA, the run just made executed no
    NumPy step (the records of a run say what it did)."""
    from itergraph.backends.jax import explain

    cg = model._jax
    if cg is None or not all(r.compiles for r in explain(model.graph)):
        return  # a stateful model runs its step graph; or explain said NumPy
    ran = [r for r in cg.explain() if not r.compiles]
    assert not ran, f"explain said XLA, but the run executed on NumPy: {ran}"


def _convert(entry: Entry) -> None:
    path = written(entry)
    peer = "openvino" if entry.target == "openvino" else "onnxruntime"
    got = PEERS.run(peer, path, entry.feeds())
    assert_outputs(got, entry, f"{peer} on the written {path.suffix}", exact_dtype=False,
                   peer_error=entry.peer_error(peer))


def _reload(entry: Entry) -> None:
    got = ig.load(written(entry)).run(entry.feeds())
    assert_outputs(list(got.values()), entry, "itergraph numpy on the written file")


RUN = {"numpy": _numpy, "jax": _jax, "convert": _convert, "reload": _reload}


def run_stage(entry: Entry, stage: str) -> None:
    reason = skip_reason(entry, stage)
    if reason is None:
        RUN[stage](entry)
        return
    invalid = skip_reason(entry, "numpy") is not None  # the file itself has no result
    with pytest.raises(Exception if invalid else (ig.Error, PeerError)):
        RUN[stage](entry)


def stage_tests(*sources: str):
    """A test function parametrized over every (entry, stage) of `sources`."""
    cases = [pytest.param(e, s, id=f"{e.id}:{s}") for e in entries_of(*sources)
             for s in STAGES]

    @pytest.mark.parametrize(("entry", "stage"), cases)
    def test_stage(entry: Entry, stage: str) -> None:
        run_stage(entry, stage)

    return test_stage


def roundtrip_skipped(entry: Entry) -> bool:
    """The roundtrip of `entry` is expected to end in a clean refusal: its ``convert`` (or
    ``roundtrip``) stage is listed in ``skips.json``."""
    return skip_reason(entry, "convert") is not None or \
        skip_reason(entry, "roundtrip") is not None


def run_roundtrip(entry: Entry, work: Path) -> None:
    """The OpenVINO IR that ``convert`` wrote, read back by itergraph and written to ONNX
    (under `work`), computes the entry's outputs in ONNX Runtime; where the IR cannot be
    written (or the file is invalid), the same refusal, or a peer's."""
    def run() -> None:
        back = work / (entry.id.replace("/", "__") + ".back.onnx")
        ig.save(ig.load(written(entry)), back)
        got = PEERS.run("onnxruntime", back, entry.feeds())
        assert_outputs(got, entry, "onnxruntime on the IR written back to ONNX",
                       exact_dtype=False, peer_error=entry.peer_error("openvino"))

    if not roundtrip_skipped(entry):
        run()
        return
    invalid = skip_reason(entry, "numpy") is not None
    with pytest.raises(Exception if invalid else (ig.Error, PeerError)):
        run()


def roundtrip_tests(source: str):
    """A test function parametrized over the entries of `source`: `run_roundtrip`."""

    @pytest.mark.parametrize("entry", [pytest.param(e, id=f"{e.id}:roundtrip")
                                       for e in entries_of(source)])
    def test_ir_back_to_onnx(entry: Entry, tmp_path) -> None:
        run_roundtrip(entry, tmp_path)

    return test_ir_back_to_onnx
