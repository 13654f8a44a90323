"""The real-world corpus entries of source `paddle` (see `corpus`; PaddlePaddle programs with
loops, conditions and recurrent layers converted by paddle2onnx, written by
``generators/gen_paddle.py``), plus one more stage
for them: the OpenVINO IR that ``convert`` wrote, read back by itergraph and written to ONNX,
computes the same outputs in ONNX Runtime."""

import pytest
from corpus import entries_of, skip_reason
from peers import PEERS, PeerError
from stages import assert_outputs, stage_tests, written

import itergraph as ig

test_stage = stage_tests("paddle")


@pytest.mark.parametrize("entry", [pytest.param(e, id=f"{e.id}:roundtrip")
                                   for e in entries_of("paddle")])
def test_ir_back_to_onnx(entry, tmp_path) -> None:
    def run() -> None:
        back = tmp_path / "back.onnx"
        ig.save(ig.load(written(entry)), back)
        got = PEERS.run("onnxruntime", back, entry.feeds())
        assert_outputs(got, entry, "onnxruntime on the IR written back to ONNX",
                       exact_dtype=False, peer_error=entry.peer_error("openvino"))

    if skip_reason(entry, "convert") is None and skip_reason(entry, "roundtrip") is None:
        run()
        return
    # the IR cannot be written (or the file is invalid): the same refusal, or a peer's
    invalid = skip_reason(entry, "numpy") is not None
    with pytest.raises(Exception if invalid else (ig.Error, PeerError)):
        run()
