"""``itergraph view``: the page opened in headless Chromium (tree of loops, port maps, back
edges, search, trace plots and the first divergence), its escaping, and every loop of the
real-world corpus drawn."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from browser import dump_dom, layout_check, parse, screenshot
from loop_models import nested, nested_feeds
from onnx import helper as h

import itergraph as ig
from itergraph import cli
from itergraph.errors import InputError
from itergraph.inspect import view
from itergraph.inspect.view_svg import nice_ticks
from itergraph.inspect.view_trace import read_trace, summarise
from itergraph.ir import Carried, Loop, Sliced
from onnx_builders import F, body, model, vi

sys.path.insert(0, str(Path(__file__).parents[1] / "realworld"))


def write_trace(path: Path, entries: dict, model_name: str = "nested", backend: str = "numpy",
                divergence: dict | None = None) -> Path:
    """A trace file in the trace command's format: per key K, ``K/values`` and ``K/steps``
    (int64 [n, depth]), and ``__meta__`` (JSON). A list of values is a ragged entry:
    ``K/values/0``, ``K/values/1`` ... and ``"ragged": true``."""
    arrays, meta_entries = {}, {}
    for key, (values, steps, info) in entries.items():
        if isinstance(values, list):
            info = {**info, "ragged": True}
            arrays.update({f"{key}/values/{i}": np.asarray(v) for i, v in enumerate(values)})
        else:
            arrays[f"{key}/values"] = np.asarray(values)
        steps = np.asarray(steps, np.int64)
        arrays[f"{key}/steps"] = steps.reshape(len(steps), -1)
        meta_entries[key] = info
    meta = {"model": model_name, "backend": backend, "entries": meta_entries}
    if divergence is not None:
        meta["divergence"] = divergence
    np.savez(path, __meta__=np.array(json.dumps(meta)), **arrays)
    return path


def nested_trace(feeds: dict) -> dict:
    """The carried values of 'outer' and 'outer/inner' at every step, by plain loops."""
    n, m = int(feeds["N"]), int(feeds["M"])
    h_, w = feeds["h0"], feeds["w"]
    hs, hsteps, gs, gsteps = [], [], [], []
    for i in range(n):
        hs.append(h_)
        hsteps.append([i])
        g = -h_ if i < 2 else np.abs(h_)
        for j in range(m):
            gs.append(g)
            gsteps.append([i, j])
            g = np.tanh(g + w)
        h_ = (g + 1).astype(np.float32)
    return {"outer/h": (np.array(hs), hsteps, {"loops": ["outer"], "tensor": "h",
                                                "kind": "carried"}),
            "outer/inner/g": (np.array(gs), gsteps, {"loops": ["outer", "inner"],
                                                     "tensor": "g", "kind": "carried"})}


def scan_model():
    """An ONNX Scan: xs sliced on axis 1 in reverse, a carried sum, a reversed scan output."""
    b = body([h.make_node("Add", ["s", "x"], ["s2"], name="acc"),
              h.make_node("Mul", ["s2", "x"], ["y"], name="scale")],
             [vi("s", F, [2]), vi("x", F, [2])], [vi("s2", F, [2]), vi("y", F, [2])])
    return model([h.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=b, num_scan_inputs=1,
                              scan_input_axes=[1], scan_input_directions=[1],
                              scan_output_directions=[1], name="the_scan")],
                 [vi("s0", F, [2]), vi("xs", F, [2, 5])], [vi("s", F, [2]), vi("ys", F, [5, 2])])


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The nested model's page with a trace and a divergence, and its DOM in Chromium, plain
    and after searching 'gw' (the URL's ?q= runs the page's own search)."""
    d = tmp_path_factory.mktemp("view")
    onnx_file = d / "nested.onnx"
    import onnx

    onnx.save(nested(), str(onnx_file))
    trace = write_trace(d / "trace.npz", nested_trace(nested_feeds(6, 4)),
                        divergence={"entry": "outer/inner/g", "step": [3, 2],
                                    "loop": "outer/inner", "engines": ["numpy", "openvino"]})
    page = d / "loops.html"
    assert cli.main(["view", str(onnx_file), "--trace", str(trace), "-o", str(page)]) == 0
    shot = screenshot(page, d / "loops.png")
    print(f"screenshot of the loop page: {shot}")
    return {"page": page, "dom": parse(dump_dom(page)),
            "searched": parse(dump_dom(page, "gw", d / "profile2")),
            "graph": ig.load(str(onnx_file)).graph, "shot": shot, "trace": trace}


def test_page_needs_no_network(pages):
    text = pages["page"].read_text()
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", text))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    assert not re.search(r"<(link|img|iframe)\b|\bsrc\s*=", text)


def test_tree_holds_every_loop_and_if_at_any_depth(pages):
    dom, graph = pages["dom"], pages["graph"]
    loops = dom.find("details", "loop")
    assert sorted(e.attrs["data-path"] for e in loops) == ["outer", "outer/inner", "scan"]
    inner = next(e for e in loops if e.attrs["data-path"] == "outer/inner")
    outer = next(e for e in loops if e.attrs["data-path"] == "outer")
    assert outer in list(inner.ancestors())  # drawn inside the outer body
    ifs = dom.find("details", "if")
    assert len(ifs) == 1 and outer in list(ifs[0].ancestors())
    assert {b.attrs["data-branch"] for b in ifs[0].find("details", "branch")} == \
        {"then_branch", "else_branch"}
    n_rows = len(dom.find("div", "node-row"))
    plain = [n for _, n in graph.walk() if not n.subgraphs()]
    assert n_rows == len(plain)


def test_port_maps_draw_ports_and_back_edges(pages):
    dom, graph = pages["dom"], pages["graph"]
    for e in dom.find("details", "loop"):
        loop = next(n for _, n in graph.walk() if isinstance(n, Loop)
                    and n.name == e.attrs["data-path"].split("/")[-1])
        svg = e.find("svg", "portmap")[0]  # its own map comes first
        carried = [p for p in loop.input_ports if isinstance(p, Carried)]
        edges = svg.find("path", "back-edge")
        assert [(p.attrs["data-from"], p.attrs["data-to"]) for p in edges] == \
            [(c.result.name, c.param.name) for c in carried]
        ins = svg.find("g", "in")
        assert [g.attrs["data-kind"] for g in ins] == ["carried"] * len(loop.input_ports)
        controls = {g.attrs["data-control"]: g.all_text() for g in svg.find("g", "control")}
        assert controls["trip count"].endswith(loop.trip_count.name)
        assert controls["condition result"].endswith(loop.condition_result.name)
        assert controls["iteration number"].endswith(loop.iteration_param.name)
    outer_svg = next(e for e in dom.find("details", "loop")
                     if e.attrs["data-path"] == "outer").find("svg", "portmap")[0]
    assert [g.attrs["data-kind"] for g in outer_svg.find("g", "out")] == ["last", "concat"]


def test_sliced_and_concat_ports_show_axis_stride_and_direction(tmp_path):
    page = view.write(scan_model(), tmp_path / "scan.html")
    dom = parse(dump_dom(page))
    svg = dom.find("svg", "portmap")[0]
    sliced = svg.find("g", "sliced")
    assert len(sliced) == 1
    assert "axis 1 stride -1" in sliced[0].all_text() and "reverse" in sliced[0].all_text()
    concat = svg.find("g", "concat")
    assert len(concat) == 1 and "new axis 0 reverse" in concat[0].all_text()
    assert len(svg.find("path", "back-edge")) == 1


def test_search_highlights_matching_tensors_and_opens_their_bodies(pages):
    dom, searched = pages["dom"], pages["searched"]
    assert not [e for e in dom.find(cls="hit")]
    hits = searched.find(cls="hit")
    assert hits and all("gw" in e.attrs["data-name"].lower() for e in hits)
    everything = searched.find(cls="tensor")
    assert len(hits) == sum("gw" in e.attrs["data-name"].lower() for e in everything)
    count = searched.find("span", id="hits")[0]
    assert count.attrs["data-count"] == str(len(hits))
    inner = next(e for e in searched.find("details", "loop")
                 if e.attrs["data-path"] == "outer/inner")
    assert "open" in inner.attrs  # closed before the search
    assert "open" not in next(e for e in dom.find("details", "loop")
                              if e.attrs["data-path"] == "outer/inner").attrs
    rows = searched.find("div", "node-row")
    assert {r.find(cls="nname")[0].all_text() for r in rows if "dim" not in r.classes} == \
        {"inner_add", "inner_tanh"}


def test_trace_plots_each_entry_and_marks_the_first_divergence(pages):
    dom = pages["dom"]
    traces = {t.attrs["data-entry"]: t for t in dom.find("div", "trace")}
    assert set(traces) == {"outer/h", "outer/inner/g"}
    for key, n in (("outer/h", 6), ("outer/inner/g", 24)):
        lines = traces[key].find("polyline", "series")
        assert sorted(p.attrs["data-series"] for p in lines) == ["max", "mean", "min", "norm"]
        assert all(len(p.attrs["points"].split()) == n for p in lines)
    marks = dom.find("line", "divergence")
    assert len(marks) == 1 and traces["outer/inner/g"] in list(marks[0].ancestors())
    # step [3, 2] of the inner loop is row 3*4 + 2 = 14 of 24: x = 64 + 560 * 14 / 23
    assert float(marks[0].attrs["x1"]) == pytest.approx(64 + 560 * 14 / 23, abs=0.1)
    banner = dom.find("div", id="divergence")[0].all_text()
    assert "outer/inner" in banner and "[3, 2]" in banner and "numpy vs openvino" in banner
    diverged = dom.find("details", "diverged")
    assert [d.attrs["data-path"] for d in diverged] == ["outer/inner"]


def test_plot_points_follow_the_summaries(pages):
    """Each series of 'outer/h' is its summary drawn on one linear scale, up growing."""
    dom = pages["dom"]
    values = nested_trace(nested_feeds(6, 4))["outer/h"][0]
    series = {p.attrs["data-series"]: [tuple(map(float, xy.split(","))) for xy in
                                       p.attrs["points"].split()]
              for p in dom.find("div", "trace", data_entry="outer/h")[0].find("polyline")}
    flat = values.reshape(6, -1).astype(np.float64)
    want = {"mean": flat.mean(1), "min": flat.min(1), "max": flat.max(1),
            "norm": np.sqrt((flat ** 2).sum(1))}
    v = np.concatenate([want[s] for s in sorted(want)])
    y = np.array([y for s in sorted(want) for _, y in series[s]])
    slope, icpt = np.polyfit(v, y, 1)
    assert slope < 0 and np.abs(y - (slope * v + icpt)).max() < 0.08  # points: 0.1 px


def test_summaries_are_mean_min_max_norm_per_step():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3, 2))
    s = summarise(x)
    for i in range(5):
        row = [float(v) for v in x[i].ravel()]
        assert s["mean"][i] == pytest.approx(sum(row) / 6)
        assert s["min"][i] == min(row) and s["max"][i] == max(row)
        assert s["norm"][i] == pytest.approx(sum(v * v for v in row) ** 0.5)


def test_a_ragged_entry_is_summarised_step_by_step(tmp_path):
    """Steps of different shapes (a growing sequence): each step's own mean, min, max."""
    steps = [np.arange(k + 1, dtype=np.float32) for k in range(5)]
    trace = write_trace(tmp_path / "r.npz", {"outer/seq": (steps, [[k] for k in range(5)], {
        "loops": ["outer"], "tensor": "seq", "kind": "body"})})
    t = read_trace(str(trace))
    (e,) = t.entries
    assert e.shape == "varies" and len(e.labels) == 5
    assert e.summary["max"] == [float(k) for k in range(5)]
    assert e.summary["mean"] == pytest.approx([k / 2 for k in range(5)])
    dom = parse(view.render(nested(), trace))
    lines = dom.find("div", "trace", data_entry="outer/seq")[0].find("polyline")
    assert len(lines) == 4 and all(len(p.attrs["points"].split()) == 5 for p in lines)


def test_names_from_the_file_are_escaped(tmp_path):
    evil = '<script>document.title="pwned"</script>'
    b = body([h.make_node("Add", ["s", "x"], [evil], name='<img src=x onerror="1">'),
              h.make_node("Identity", [evil], ['q"uote'], name="id")],
             [vi("s", F, [2]), vi("x", F, [2])], [vi(evil, F, [2]), vi('q"uote', F, [2])])
    m = model([h.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=b, num_scan_inputs=1,
                           name="<b>scan</b>")],
              [vi("s0", F, [2]), vi("xs", F, [3, 2])], [vi("s", F, [2]), vi("ys", F, [3, 2])])
    trace = write_trace(tmp_path / "t.npz", {
        f"<b>scan</b>/{evil}": (np.ones((3, 2)), [[0], [1], [2]],
                                {"loops": ["<b>scan</b>"], "tensor": evil, "kind": "carried"})},
        model_name="<script>x</script>",
        divergence={"entry": f"<b>scan</b>/{evil}", "step": [1], "loop": "<i>l</i>",
                    "engines": ["<script>a</script>", "b"]})
    page = view.write(m, tmp_path / "evil.html", trace=trace)
    dom = parse(dump_dom(page, "script"))
    assert len(dom.find("script")) == 1 and len(dom.find("img")) == 0
    assert not dom.find("b") or all(b.parent.tag != "summary" for b in dom.find("b")
                                    if b.all_text() == "scan")
    assert dom.find("title")[0].all_text().endswith(": loops")  # the injected script never ran
    names = {e.attrs["data-name"] for e in dom.find(cls="tensor")}
    assert evil in names and 'q"uote' in names
    assert dom.find("span", id="hits")[0].attrs["data-count"] != "0"
    assert "document.title" in dom.all_text()  # shown as text


def test_every_loop_of_the_real_world_corpus_is_drawn():
    """Each Loop of the corpus models gets one expandable entry and one back edge per
    carried value; each sliced input shows its axis and stride."""
    from check_layout import loadable_entries

    drawn = 0
    for e in loadable_entries():
        graph = ig.load(str(e.file)).graph
        loops = [n for _, n in graph.walk() if isinstance(n, Loop)]
        text = view.render(graph)
        assert text.count('<details class="loop') == len(loops), e.id
        assert text.count('class="back-edge"') == sum(len(n.carried) for n in loops), e.id
        for n in loops:
            for p in n.input_ports:
                if isinstance(p, Sliced):
                    assert f"axis {p.axis} stride {p.stride}" in text, e.id
        drawn += len(loops)
    assert drawn > 300


def test_a_trace_file_that_is_not_one_is_refused(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="cannot read trace"):
        read_trace(str(bad))
    np.savez(tmp_path / "nometa.npz", x=np.ones(2))
    with pytest.raises(InputError, match="__meta__"):
        read_trace(str(tmp_path / "nometa.npz"))
    write_trace(tmp_path / "short.npz", {"a/h": (np.ones((3, 2)), [[0], [1]], {})})
    with pytest.raises(InputError, match="'a/h' has 3 values but 2 step"):
        read_trace(str(tmp_path / "short.npz"))
    assert cli.main(["view", str(tmp_path / "missing.onnx")]) == 2


def test_plot_ticks_are_round_and_the_legend_is_below_the_lines(pages):
    assert nice_ticks(0, 23, 8) == [0, 5, 10, 15, 20]
    assert nice_ticks(-0.37, 1.23, 5) == [0.0, 0.5, 1.0]
    assert nice_ticks(0, 11, 8) == [0, 2, 4, 6, 8, 10]
    svg = pages["dom"].find("div", "trace", data_entry="outer/inner/g")[0].find("svg")[0]
    xt = [t.all_text() for t in svg.find("text", "x")]
    assert xt == ["0,0", "1,1", "2,2", "3,3", "4,4", "5,3"][:len(xt)] or len(xt) >= 4, xt
    frame = svg.find("rect", "frame")[0]
    bottom = float(frame.attrs["y"]) + float(frame.attrs["height"])
    assert all(float(t.attrs["y"]) > bottom + 14 for t in svg.find("text", "legend"))


def test_captures_are_drawn_in_the_port_map(tmp_path):
    """An outer value read inside the body by name gets a row of its own."""
    b = body([h.make_node("Add", ["s", "w"], ["s2"], name="acc"),
              h.make_node("Identity", ["s2"], ["y"], name="out")],
             [vi("s", F, [2]), vi("x", F, [2])], [vi("s2", F, [2]), vi("y", F, [2])])
    m = model([h.make_node("Relu", ["w0"], ["w"], name="pre"),
               h.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=b, num_scan_inputs=1,
                           name="the_scan")],
              [vi("s0", F, [2]), vi("xs", F, [3, 2]), vi("w0", F, [2])],
              [vi("s", F, [2]), vi("ys", F, [3, 2])])
    dom = parse(view.render(m))
    caps = dom.find("svg", "portmap")[0].find("g", "capture")
    assert [g.find("text", "tensor")[0].attrs["data-name"] for g in caps] == ["w"]
    assert "captured" in caps[0].all_text()


def test_bodies_are_drawn_as_graphs(pages):
    """Each loop body is laid out by dagre in the page: one box per node, one path per edge."""
    dom, graph = pages["dom"], pages["graph"]
    svgs = dom.find("svg", "bodygraph")
    assert len(svgs) == sum(1 for _, n in graph.walk() if isinstance(n, Loop))
    for svg in svgs:
        assert "data-error" not in svg.attrs
        data = json.loads(svg.attrs["data-graph"])
        assert len(svg.find("g", "gnode")) == len(data["nodes"])
        assert len(svg.find("path", "gedge")) == len(data["edges"]) > 0
        ops = [t.all_text() for t in svg.find("text", "op")]
        assert sorted(ops) == sorted(n["op"] for n in data["nodes"] if n["op"])


def demo_and_sample_models(tmp_path) -> list:
    """The demo's two LSTMs and a sample of the corpus's loops from every exporter."""
    import subprocess

    script = Path(__file__).parents[2] / "examples" / "make_lstm_models.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path / "demo")], check=True,
                   capture_output=True)
    models = sorted((tmp_path / "demo").glob("*.onnx"))
    from check_layout import corpus_models

    found = corpus_models()
    by_dir: dict[str, list] = {}
    for _, f in found:
        by_dir.setdefault(f.parent.name, []).append(f)
    for files in by_dir.values():  # tf, tf-ov, torch, torch-ov, ...: evenly spread
        models += files[::max(1, len(files) // 2)][:2]
    return models


def test_no_text_overlaps_or_is_cut_on_the_traced_page(pages):
    n, problems = layout_check(pages["page"])
    assert n > 50 and not problems, problems


def test_no_text_overlaps_or_is_cut_on_real_models(tmp_path):
    """Measured in Chromium after layout: no two text boxes of an SVG overlap and every box
    lies inside its SVG, on the demo models and a sample of the corpus (all of it:
    ``python tests/inspect/check_layout.py``)."""
    from check_layout import check

    models = demo_and_sample_models(tmp_path)
    assert len(models) >= 20
    results = check([(str(f), f) for f in models], tmp_path)
    assert sum(n for _, n, _ in results) > 1000
    bad = {ident: problems[:5] for ident, _, problems in results if problems}
    assert not bad, bad


def test_the_plain_nodes_around_the_loops_are_one_collapsed_list(tmp_path):
    """A model's nodes outside any loop do not bury its loops: the tree shows the loop, then
    one closed list of the other nodes, counted by op; the heading counts loops and Ifs."""
    b = body([h.make_node("Add", ["s", "x"], ["s2"], name="acc"),
              h.make_node("Identity", ["s2"], ["y"], name="out")],
             [vi("s", F, [2]), vi("x", F, [2])], [vi("s2", F, [2]), vi("y", F, [2])])
    pre = [h.make_node("Relu", ["s00"], ["s0"], name="pre0")] + \
        [h.make_node("Relu", [f"xs{k}"], [f"xs{k + 1}"], name=f"pre{k + 1}") for k in range(3)]
    m = model(pre + [h.make_node("Scan", ["s0", "xs3"], ["s", "ys"], body=b,
                                 num_scan_inputs=1, name="the_scan")],
              [vi("s00", F, [2]), vi("xs0", F, [3, 2])],
              [vi("s", F, [2]), vi("ys", F, [3, 2])])
    dom = parse(view.render(m))
    tree = dom.find("div", id="tree")[0]
    top = [c for c in tree.children if c.tag == "details"]
    assert [("loop" in c.classes, "nodelist" in c.classes) for c in top] == \
        [(True, False), (False, True)]
    assert "open" not in top[1].attrs
    assert top[1].find("summary")[0].all_text() == "4 other nodes (Relu x4)"
    assert len(top[1].find("div", "node-row")) == 4
    assert "(1 loop, 0 Ifs)" in dom.find("h2")[0].all_text()
    plain = parse(view.render(model([h.make_node("Relu", ["a"], ["b"], name="r")],
                                    [vi("a", F, [2])], [vi("b", F, [2])])))
    top = [c for c in plain.find("div", id="tree")[0].children if c.tag == "details"]
    assert [c.attrs["class"] for c in top] == ["nodelist"]
    assert top[0].find("summary")[0].all_text() == "1 other node (Relu x1)"


def test_a_sliced_inputs_detail_reads_in_python_terms_and_ends_before_the_body():
    """OpenVINO's fence posts (``[0:-1]``, the whole axis) are not printed as a Python
    slice (all but the last); the detail line under the input ends before the body's box."""
    from itergraph.inspect.view_svg import DETAIL_CHAR, in_label, port_map

    m = ig.load(scan_model())
    loop = next(n for _, n in m.graph.walk() if isinstance(n, Loop))
    p = next(p for p in loop.input_ports if isinstance(p, Sliced))
    p.start, p.end, p.part_size, p.keep_axis = 0, -1, 1, True
    kind, detail = in_label(p)
    assert "[" not in detail and "part" not in detail and "keeps axis" in detail
    svg = parse(port_map(loop)).find("svg", "portmap")[0]
    text = svg.find("text", "detail")[0]
    body = svg.find("rect", "body")[0]
    right = float(text.attrs["x"]) + DETAIL_CHAR * len(text.all_text())
    assert right < float(body.attrs["x"])
    p.start, p.end = 1, -2
    assert "[1:-1]" in in_label(p)[1]


def test_a_trace_of_another_model_is_refused(tmp_path, capsys):
    """A trace none of whose loops is a loop of the model (and recorded on another file) is a
    usage error naming both, not plots beside the wrong loops."""
    import onnx

    onnx.save(scan_model(), tmp_path / "scan.onnx")
    trace = write_trace(tmp_path / "t.npz", nested_trace(nested_feeds(3, 2)),
                        model_name="nested.onnx")
    assert cli.main(["view", str(tmp_path / "scan.onnx"), "--trace", str(trace), "-o",
                     str(tmp_path / "p.html")]) == 2
    err = capsys.readouterr().err
    assert "recorded on 'nested.onnx'" in err and "outer/inner" in err
    assert not (tmp_path / "p.html").exists()
    onnx.save(nested(), tmp_path / "nested.onnx")
    assert cli.main(["view", str(tmp_path / "nested.onnx"), "--trace", str(trace), "-o",
                     str(tmp_path / "p.html")]) == 0
