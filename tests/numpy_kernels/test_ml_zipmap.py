"""ai.onnx.ml ZipMap (the default output of skl2onnx classifiers) against ONNX Runtime, and
its ``seq(map(...))`` type kept through itergraph's ONNX writer."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper as h

import itergraph as ig
from itergraph.errors import ExecutionError
from itergraph.ir import MapType, SequenceType
from onnx_builders import F, vi


def _zipmap(**labels) -> onnx.ModelProto:
    key = onnx.TensorProto.INT64 if "classlabels_int64s" in labels else onnx.TensorProto.STRING
    out = h.make_value_info("Z", h.make_sequence_type_proto(
        h.make_map_type_proto(key, h.make_tensor_type_proto(F, []))))
    g = h.make_graph([h.make_node("ZipMap", ["X"], ["Z"], domain="ai.onnx.ml", **labels)],
                     "g", [vi("X", F, ["n", "c"])], [out])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 3)],
                     ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m


@pytest.mark.parametrize("labels", [{"classlabels_int64s": [0, 4, 7]},
                                    {"classlabels_strings": ["cat", "dog", "eel"]}])
def test_zipmap_matches_onnxruntime(labels, tmp_path):
    m = _zipmap(**labels)
    x = np.random.default_rng(0).random((4, 3), dtype=np.float32)
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"X": x})[0]
    loaded = ig.load(m)
    assert loaded.graph.outputs[0].type == SequenceType(MapType(
        loaded.graph.outputs[0].type.elem.key, loaded.graph.outputs[0].type.elem.value))
    for backend in ("numpy", "jax"):
        assert loaded.run({"X": x}, backend=backend)["Z"] == want
    path = tmp_path / "z.onnx"
    ig.save(loaded, path)  # the map type is written back, so ORT accepts the file
    onnx.checker.check_model(str(path), full_check=True)
    assert ort.InferenceSession(str(path)).run(None, {"X": x})[0] == want


def test_zipmap_refuses_scores_that_do_not_match_the_labels():
    with pytest.raises(ExecutionError, match="3 class labels"):
        ig.load(_zipmap(classlabels_int64s=[0, 1, 2])).run({"X": np.zeros((2, 4), np.float32)})
