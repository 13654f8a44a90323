"""`itergraph info` and `itergraph convert` on OpenVINO IR, both directions, checked by engines."""

from __future__ import annotations

from pathlib import Path

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
    assert "format: OpenVINO IR, read as ONNX (ai.onnx " in text and "\nopsets:" not in text


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


def test_written_ir_keeps_loop_output_shapes_and_info_reads_plainly(tmp_path, capsys):
    """``convert`` then ``info``: a loop's stacked output keeps its known dimensions in the IR
    (OpenVINO reads them too), the canonical loop's internal opset is not listed, and a sliced
    range is said in Python's terms."""
    import subprocess
    import sys

    import openvino as ov

    from itergraph.cli import main as cli

    example = Path(__file__).parents[2] / "examples" / "make_lstm_models.py"
    subprocess.run([sys.executable, str(example), "--out", str(tmp_path)], check=True,
                   capture_output=True)
    xml = tmp_path / "m.xml"
    assert cli(["convert", str(tmp_path / "lstm_while.onnx"), str(xml)]) == 0
    model = ov.Core().read_model(str(xml))
    assert str(model.outputs[0].get_partial_shape()) == "[?,2,8]"
    capsys.readouterr()
    assert cli(["info", str(xml)]) == 0
    text = capsys.readouterr().out
    assert "Y: tensor(float32)[?,2,8]" in text
    assert "itergraph 1" not in text and "the whole axis" in text and "[0:-1:1]" not in text


def test_a_missing_bin_is_named(tmp_path, capsys):
    """An .xml whose .bin is not beside it: the error names the file looked for."""
    m, _ = _lstm_ti(reverse=False)
    xml = save(m, tmp_path)
    xml.with_suffix(".bin").unlink()
    assert cli(["info", str(xml)]) == 1
    err = capsys.readouterr().err
    assert f"'{xml.with_suffix('.bin')}' does not exist" in err
