"""`itergraph info` and `itergraph convert` on OpenVINO IR, both directions, checked by engines."""

from __future__ import annotations

import numpy as np
import onnx
from ov_helpers import run_ov, save
from test_ov_tensor_iterator import _lstm_ti

import itergraph as ig
from itergraph.cli import main as cli


def test_info_shows_the_loop_tree_of_an_xml(tmp_path, capsys):
    m, _ = _lstm_ti(reverse=True)
    xml = save(m, tmp_path)
    assert cli(["info", str(xml)]) == 0
    text = capsys.readouterr().out
    assert "(from openvino.TensorIterator)" in text
    assert "sliced" in text and "reverse" in text and "part_size 1, keeps axis" in text
    assert text.count("carried") == 2


def test_convert_xml_to_onnx_and_back(tmp_path, capsys):
    import onnxruntime as ort

    m, feeds = _lstm_ti(reverse=False)
    xml = save(m, tmp_path)
    want = run_ov(xml, feeds)
    onnx_path = tmp_path / "converted.onnx"
    assert cli(["convert", str(xml), str(onnx_path)]) == 0
    onnx.checker.check_model(onnx.load(onnx_path), full_check=True)
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    got = sess.run(None, feeds)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    back = tmp_path / "back.xml"
    assert cli(["convert", str(onnx_path), str(back)]) == 0
    for g, w in zip(run_ov(back, feeds), want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    outs = ig.load(back).run(feeds)
    for g, w in zip(outs.values(), want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    assert "wrote" in capsys.readouterr().out
