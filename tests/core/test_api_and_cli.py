"""The public API (load, Model.run, save) and the `itergraph` command line."""

import numpy as np
import onnx
import pytest
from onnx import helper as h

import itergraph as ig
from itergraph.cli import main as cli
from onnx_builders import I64, B, F, body, const, model, run_ort, vi


def loop_model():
    b = body([h.make_node("Add", ["x_in", "one"], ["x_out"]),
              h.make_node("Identity", ["c_in"], ["c_out"]),
              h.make_node("Identity", ["x_in"], ["y"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [2])],
             [vi("c_out", B, []), vi("x_out", F, [2]), vi("y", F, [2])],
             [const("one", 1.0, np.float32)])
    return model([h.make_node("Loop", ["M", "", "x0"], ["x", "ys"], body=b, name="count")],
                 [vi("M", I64, []), vi("x0", F, [2])], [vi("x", F, [2]), vi("ys", F, [None, 2])])


FEEDS = {"M": np.array(3), "x0": np.array([1.0, 2.0], np.float32)}


def test_load_from_proto_bytes_and_path(tmp_path):
    m = loop_model()
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    want = run_ort(m, FEEDS)
    for src in (m, m.SerializeToString(), path, str(path)):
        got = ig.load(src).run(FEEDS)
        assert list(got) == ["x", "ys"]
        np.testing.assert_array_equal(got["ys"], want["ys"])


def test_save_round_trip_runs_in_onnxruntime(tmp_path):
    ig.save(ig.load(loop_model()), tmp_path / "out.onnx")
    written = onnx.load(tmp_path / "out.onnx")
    onnx.checker.check_model(written, full_check=True)
    np.testing.assert_array_equal(run_ort(written, FEEDS)["ys"], run_ort(loop_model(), FEEDS)["ys"])


@pytest.mark.parametrize("feeds,match", [
    ({"M": np.array(3)}, "missing input 'x0'"),
    ({}, "missing inputs 'M' .*, 'x0'"),
    ({**FEEDS, "nope": np.zeros(1)}, "unknown input"),
    ({**FEEDS, "x0": np.array([1, 2], np.int32)}, "element type float32"),
    ({**FEEDS, "x0": np.zeros((2, 2), np.float32)}, "rank 1"),
    ({**FEEDS, "x0": np.zeros(3, np.float32)}, "dimension 0 must be 2"),
])
def test_bad_feeds_are_input_errors(feeds, match):
    with pytest.raises(ig.InputError, match=match):
        ig.load(loop_model()).run(feeds)


@pytest.mark.parametrize("source,error,match", [
    ("no/such/model.onnx", ig.InputError, "no such file"),
    (b"not a protobuf", ig.ModelError, "cannot parse ONNX"),
    (42, ig.InputError, "cannot load a int"),
    ("model.txt", ig.InputError, "no such file|cannot tell the format"),
])
def test_bad_sources_are_itergraph_errors(source, error, match):
    with pytest.raises(error, match=match):
        ig.load(source)


def test_unknown_backend_is_an_error():
    with pytest.raises(ig.InputError, match="unknown backend"):
        ig.load(loop_model()).run(FEEDS, backend="tpu")


def test_cli_run_info_and_output_dir(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    np.save(tmp_path / "M.npy", FEEDS["M"])
    np.save(tmp_path / "x0.npy", FEEDS["x0"])
    out_dir = tmp_path / "outs"
    rc = cli(["run", str(path), "--input", f"M={tmp_path / 'M.npy'}",
              "--input", f"x0={tmp_path / 'x0.npy'}", "--output-dir", str(out_dir)])
    text = capsys.readouterr().out
    assert rc == 0 and "ys: shape (3, 2) dtype float32" in text
    np.testing.assert_array_equal(np.load(out_dir / "ys.npy"),
                                  run_ort(loop_model(), FEEDS)["ys"])
    assert cli(["info", str(path)]) == 0
    info = capsys.readouterr().out
    assert "Loop 'count' (from onnx.Loop)" in info and "carried" in info and "concat" in info


def test_cli_reports_errors_without_traceback(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    assert cli(["run", str(path), "--input", "x0=nope.npy"]) == 2
    assert "cannot read input 'x0'" in capsys.readouterr().err


def test_cli_generates_the_inputs_not_given(tmp_path, capsys):
    """As Polygraphy and benchmark_app: an input not given is made up (floats in [0, 1),
    integers in [0, 10) or --value-range, shapes from the declaration or --input-shapes),
    said on stderr with the seed; one seed repeats the run; a symbolic dimension without a
    size is an error naming it."""
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    outs = []
    for k in range(2):
        assert cli(["run", str(path), "--input-shapes", "x0:[2]", "--value-range", "M:[2,5]",
                    "--seed", "7", "--output-dir", str(tmp_path / f"o{k}")]) == 0
        err = capsys.readouterr().err
        assert "generated input 'M': int64[], uniform in [2, 5), seed 7" in err
        assert "generated input 'x0': float32[2]" in err
        outs.append(np.load(tmp_path / f"o{k}" / "ys.npy"))
    np.testing.assert_array_equal(outs[0], outs[1])
    assert 2 <= outs[0].shape[0] < 5
    sym = tmp_path / "sym.onnx"
    m = loop_model()
    m.graph.input[1].type.tensor_type.shape.dim[0].dim_param = "n"
    onnx.save(m, sym)
    np.save(tmp_path / "M.npy", np.array(3))
    assert cli(["run", str(sym), "--input", f"M={tmp_path / 'M.npy'}"]) == 2
    assert "'x0' [n] has dimensions without a size" in capsys.readouterr().err


def test_auto_backend_picks_jax_when_the_whole_graph_compiles_and_says_so():
    m = ig.load(loop_model())
    assert m.choose_backend("auto") == "jax"
    np.testing.assert_array_equal(m.run(FEEDS, backend="auto")["ys"],
                                  m.run(FEEDS, backend="numpy")["ys"])
    assert "everything compiles" in m.explain(backend="jax")


def _sequence_loop(read_length: bool):
    """``s = []; for i in range(M): s.append(float(i))`` then ``stack(s)``; with
    `read_length` the body also reads ``len(s)``."""
    from onnx import TensorProto

    seq = h.make_tensor_sequence_value_info
    extra = [h.make_node("SequenceLength", ["s_in"], ["n"])] if read_length else []
    b = body([h.make_node("Cast", ["i"], ["fi"], to=F),
              h.make_node("SequenceInsert", ["s_in", "fi"], ["s_out"]), *extra,
              h.make_node("Identity", ["c_in"], ["c_out"])],
             [vi("i", I64, []), vi("c_in", B, []), seq("s_in", TensorProto.FLOAT, None)],
             [vi("c_out", B, []), seq("s_out", TensorProto.FLOAT, None),
              *([vi("n", I64, [])] if read_length else [])])
    return ig.load(model([h.make_node("SequenceEmpty", [], ["s0"], dtype=F),
                          h.make_node("Loop", ["M", "", "s0"], ["s", *(["ns"] * read_length)],
                                      body=b, name="seqloop"),
                          h.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1)],
                         [vi("M", I64, [])],
                         [vi("y", F, [None]), *([vi("ns", I64, [None])] * read_length)]))


def test_auto_backend_falls_back_to_numpy_for_sequences():
    m = _sequence_loop(read_length=True)
    assert m.choose_backend("auto") == "numpy"
    assert "seqloop" in m.explain(backend="jax") or "Sequence" in m.explain(backend="jax")
    for backend in ("auto", "jax"):
        got = m.run({"M": np.array(4)}, backend=backend)
        np.testing.assert_array_equal(got["y"], np.arange(4, dtype=np.float32))
        np.testing.assert_array_equal(got["ns"], np.arange(4))


def test_a_list_built_in_a_loop_compiles_with_xla():
    """The appended list becomes a scan output (`passes.sequence_scan_outputs`)."""
    m = _sequence_loop(read_length=False)
    assert m.choose_backend("auto") == "jax"
    np.testing.assert_array_equal(m.run({"M": np.array(4)}, backend="auto")["y"],
                                  np.arange(4, dtype=np.float32))


def test_absurdly_deep_nesting_is_a_model_error_not_a_recursion_crash():
    from itergraph.ir import Graph, Node, Value

    x = Value("x")
    top = Graph("top", inputs=[x])
    cur = top
    for d in range(5000):
        sub = Graph(f"g{d}", outputs=[x])
        n = Node("If", [x], 1, {"then_branch": sub, "else_branch": sub}, version=17)
        cur.nodes.append(n)
        cur.outputs = [n.outputs[0]]
        cur = sub
    with pytest.raises(ig.ModelError, match="too deeply"):
        ig.load(top)


def test_cli_output_into_a_closed_pipe_is_not_a_traceback():
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-m", "itergraph.cli", "optimize", "--list"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first line, as with `| head -0`
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 0 and "Traceback" not in err, err


def test_cli_version_and_package_metadata(capsys):
    """``itergraph --version`` prints the installed version; the package states its licence
    (Apache-2.0, with the LICENSE file) and ships ``py.typed``."""
    from importlib import metadata
    from importlib.resources import files

    with pytest.raises(SystemExit) as done:
        cli(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"itergraph {ig.__version__}"
    meta = metadata.metadata("itergraph")
    assert meta.get("License-Expression") == "Apache-2.0" or meta.get("License") == "Apache-2.0"
    assert files("itergraph").joinpath("py.typed").is_file()


def test_cli_inputs_from_an_npz_archive(tmp_path, capsys):
    """``--input FILE.npz`` feeds every array by its name, ``NAME=FILE.npz`` one array of it;
    a later item overrides; a name the archive lacks is an error that lists what it holds."""
    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    np.savez(tmp_path / "feeds.npz", **FEEDS)
    np.savez(tmp_path / "other.npz", x0=FEEDS["x0"] * 2)
    want = run_ort(loop_model(), FEEDS)["ys"]
    for args in (["--input", str(tmp_path / "feeds.npz")],
                 ["--input", f"M={tmp_path / 'feeds.npz'}",
                  "--input", f"x0={tmp_path / 'feeds.npz'}"]):
        out_dir = tmp_path / f"outs{len(args)}"
        assert cli(["run", str(path), *args, "--output-dir", str(out_dir)]) == 0
        np.testing.assert_array_equal(np.load(out_dir / "ys.npy"), want)
    doubled = run_ort(loop_model(), {**FEEDS, "x0": FEEDS["x0"] * 2})["ys"]
    assert cli(["run", str(path), "--input", str(tmp_path / "feeds.npz"), "--input",
                f"x0={tmp_path / 'other.npz'}", "--output-dir", str(tmp_path / "o3")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "o3" / "ys.npy"), doubled)
    capsys.readouterr()
    assert cli(["run", str(path), "--input", f"y={tmp_path / 'feeds.npz'}"]) == 2
    err = capsys.readouterr().err
    assert "no array named 'y'" in err and "'M'" in err and "'x0'" in err


def test_the_lazy_public_names_are_listed():
    assert {"load", "save", "optimize", "check", "compare", "Model"} <= set(dir(ig))


def test_cli_json_output(tmp_path, capsys):
    """``info --json`` and ``run --json`` print machine-readable JSON: the model's inputs,
    outputs (dtype, shape), loops and op counts; the outputs' shapes, dtypes and statistics."""
    import json

    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    assert cli(["info", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert [v["name"] for v in info["inputs"]] == ["M", "x0"]
    assert info["loops"][0]["name"] == "count" and info["ops"]["Loop"] == 1
    np.savez(tmp_path / "feeds.npz", **FEEDS)
    assert cli(["run", str(path), "--input", str(tmp_path / "feeds.npz"), "--json"]) == 0
    outs = json.loads(capsys.readouterr().out)
    ys = run_ort(loop_model(), FEEDS)["ys"]
    assert outs["ys"]["shape"] == list(ys.shape) and outs["ys"]["dtype"] == "float32"
    assert outs["ys"]["max"] == pytest.approx(float(ys.max()))


def test_cli_json_of_explain_check_and_profile(tmp_path, capsys):
    """``explain``, ``check`` and ``profile`` with ``--json``: the same facts as their text,
    as data (the text is rendered from it)."""
    import json

    path = tmp_path / "m.onnx"
    onnx.save(loop_model(), path)
    assert cli(["explain", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["backend"] == "jax" and data["summary"] == "everything compiles with XLA"
    assert any(e["element"] == "Loop node 'count'" and e["engine"] == "xla"
               for e in data["elements"])
    assert cli(["explain", str(path)]) == 0
    text = capsys.readouterr().out
    assert all(f"[{e['engine']}] {e['element']}: {e['reason']}" in text for e in data["elements"])
    assert cli(["explain", str(path), "--backend", "auto", "--json"]) == 0
    auto = json.loads(capsys.readouterr().out)
    assert auto["backend"] == "auto" and auto["then"]["backend"] in ("numpy", "jax")

    assert cli(["check", str(path), "--target", "tensorrt", "--json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert report["target"] == "tensorrt" and report["ok"] == (not report["findings"])
    assert all({"feature", "where", "fix", "message"} <= set(f) for f in report["findings"])

    np.savez(tmp_path / "feeds.npz", **FEEDS)
    assert cli(["profile", str(path), "--input", str(tmp_path / "feeds.npz"), "--repeat", "2",
                "--json"]) == 0
    prof = json.loads(capsys.readouterr().out)
    assert prof["backend"] == "numpy" and len(prof["runs"]) == 2
    assert prof["loops"][0]["loop"] == "count" and prof["loops"][0]["steps"] == 3
    assert {n["op"] for n in prof["nodes"]} >= {"Add", "Loop"}


def test_a_writer_fault_is_not_blamed_on_the_path(tmp_path, monkeypatch):
    """A writer's own ValueError (say, a broadcast in an exporter) is a ModelError naming the
    writer; the path is blamed only for what the file system says (or a NUL in it)."""
    import itergraph.frontends.onnx as onnx_frontend

    def broken(graph):
        raise ValueError("operands could not be broadcast together")

    m = ig.load(loop_model())
    monkeypatch.setattr(onnx_frontend, "write", broken)
    with pytest.raises(ig.ModelError, match="ONNX writer failed on this model, not on the path"):
        ig.save(m, tmp_path / "m.onnx")
    monkeypatch.undo()
    with pytest.raises(ig.InputError, match="NUL"):
        ig.save(m, str(tmp_path / "a\0b.onnx"))
    with pytest.raises(ig.InputError, match="cannot write"):
        ig.save(m, tmp_path / "missing" / "m.onnx")
