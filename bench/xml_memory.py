"""Memory of reading a large OpenVINO IR: peak RSS of `itergraph.load` against the file size.

    .venv/bin/python bench/xml_memory.py [--mb 100] [--kinds chain,loop] [--phases]

Writes, in a temporary directory, an IR v11 ``.xml`` of about `--mb` MB (no ``.bin``) and loads
it with `itergraph.load` in a child process (Linux: the peak is /proc/self/status VmHWM, reset
through /proc/self/clear_refs; elsewhere ru_maxrss). Reported: the file size, the peak RSS
during the load minus the RSS before it, and their ratio; the goal is under 5x.

Kinds of file:

- ``chain``: a Parameter followed by a long chain of small element-wise layers (Relu, Add of
  the two previous layers, Multiply, Sigmoid), every port of rank 2, one output in eight
  named; laid out as OpenVINO's serializer writes it (one element per line, tab indents);
- ``dense``: the same network with no whitespace (the most layers per byte);
- ``loop``: the chain inside the body of one TensorIterator.

``--phases`` also loads the file step by step in the child (XML parse, network parse, graph
build, verify) and prints the RSS growth of each, to show where the memory goes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory import current_rss, peak_rss, reset_peak  # noqa: E402

GOAL = 5.0
CYCLE = ("ReLU", "Add", "Multiply", "Sigmoid")


# ----------------------------------------------------------------------------- the file


class Writer:
    """Writes elements one per line, indented with tabs as OpenVINO's serializer does
    (`dense`: no whitespace at all, the smallest file for the same network)."""

    def __init__(self, out, dense: bool):
        self.out, self.dense, self.depth = out, dense, 0

    def line(self, text: str, step: int = 0) -> None:
        if step < 0:
            self.depth += step
        self.out.write(text if self.dense else "\t" * self.depth + text + "\n")
        if step > 0:
            self.depth += step

    def port(self, pid: int, name: str | None, dims=(1, 64)) -> None:
        names = f' names="{name}"' if name else ""
        self.line(f'<port id="{pid}" precision="FP32"{names}>', 1)
        for d in dims:
            self.line(f"<dim>{d}</dim>")
        self.line("</port>", -1)

    def layer(self, lid: int, kind: str, name: str, data: str, ins: int, out_name) -> None:
        self.line(f'<layer id="{lid}" name="{name}" type="{kind}" version="opset1">', 1)
        if data:
            self.line(f"<data {data} />")
        if ins:
            self.line("<input>", 1)
            for p in range(ins):
                self.port(p, None)
            self.line("</input>", -1)
        if out_name is not False:
            self.line("<output>", 1)
            self.port(ins, out_name)
            self.line("</output>", -1)

    def edge(self, a: int, ap: int, b: int, bp: int) -> None:
        self.line(f'<edge from-layer="{a}" from-port="{ap}" to-layer="{b}" to-port="{bp}" />')


def _chain(w: Writer, n: int, prefix: str) -> None:
    """A network: Parameter 0, n element-wise layers, Result n + 1 (layers and edges)."""
    w.line("<layers>", 1)
    w.layer(0, "Parameter", f"{prefix}x", 'shape="1,64" element_type="f32"', 0, f"{prefix}x")
    w.line("</layer>", -1)
    edges = []
    prev, prev2 = (0, 0), (0, 0)  # (layer id, output port)
    for lid in range(1, n + 1):
        kind = CYCLE[lid % len(CYCLE)]
        two = kind in ("Add", "Multiply")
        name = f"{prefix}{kind}_{lid}"
        w.layer(lid, kind, name, 'auto_broadcast="numpy"' if two else "", 1 + two,
                name if lid % 8 == 0 else None)
        w.line("</layer>", -1)
        edges.append((*prev, lid, 0))
        if two:
            edges.append((*prev2, lid, 1))
        prev2, prev = prev, (lid, 1 + two)
    w.layer(n + 1, "Result", f"{prefix}y", "", 1, False)
    w.line("</layer>", -1)
    edges.append((*prev, n + 1, 0))
    w.line("</layers>", -1)
    w.line("<edges>", 1)
    for e in edges:
        w.edge(*e)
    w.line("</edges>", -1)


LAYER_BYTES = {"chain": 450, "dense": 370, "loop": 505}  # about, with its edges


def write_model(path: Path, mb: float, kind: str) -> int:
    """Write an IR of about `mb` MB; returns the number of layers."""
    n = max(4, int(mb * 1e6 / LAYER_BYTES[kind]))
    with open(path, "w", encoding="utf-8") as out:
        w = Writer(out, dense=kind == "dense")
        out.write('<?xml version="1.0"?>\n')
        w.line('<net name="big" version="11">', 1)
        if kind != "loop":
            _chain(w, n, "")
            w.line("</net>", -1)
            return n + 2
        w.line("<layers>", 1)
        w.layer(0, "Parameter", "x", 'shape="1,64" element_type="f32"', 0, "x")
        w.line("</layer>", -1)
        w.layer(1, "TensorIterator", "ti", "", 1, "ti")
        w.line("<port_map>", 1)
        w.line('<input external_port_id="0" internal_layer_id="0" />')
        w.line(f'<output external_port_id="1" internal_layer_id="{n + 1}" />')
        w.line("</port_map>", -1)
        w.line("<body>", 1)
        _chain(w, n, "body/")
        w.line("</body>", -1)
        w.line("</layer>", -1)
        w.layer(2, "Result", "y", "", 1, False)
        w.line("</layer>", -1)
        w.line("</layers>", -1)
        w.line("<edges>", 1)
        w.edge(0, 0, 1, 0)
        w.edge(1, 1, 2, 0)
        w.line("</edges>", -1)
        w.line("</net>", -1)
    return n + 5


# ----------------------------------------------------------------------------- child


def child_load(path: str) -> dict:
    import gc

    import itergraph as ig

    gc.collect()
    reset_peak()
    before = current_rss()
    model = ig.load(path)
    peak = peak_rss() - before
    return {"peak": peak, "nodes": len(model.graph.nodes)}


def child_phases(path: str) -> list[tuple[str, int, int]]:
    """(phase, RSS growth since the start, peak growth) after each step of the reader."""
    import gc

    import itergraph as ig
    from itergraph.frontends.openvino import reader, xmlsafe
    from itergraph.frontends.openvino.netparse import NetworkBuilder, parse_net
    from itergraph.ir import verify

    small = Path(path).with_name("small.xml")
    write_model(small, 0.01, "chain")
    ig.load(small)  # imports the translators: they are not part of the measure
    gc.collect()
    reset_peak()
    start = current_rss()
    rows = []

    def mark(phase):
        rows.append((phase, current_rss() - start, peak_rss() - start))

    with open(path, "rb") as f:
        root = xmlsafe.parse(iter(lambda: f.read(xmlsafe.CHUNK), b""), what=path,
                             builder=NetworkBuilder())
    mark("XML parse")
    net = parse_net(root)
    mark("network parse")
    graph = reader.Reader(None).build(net, "m", top=True).graph
    mark("graph build")
    del root, net
    gc.collect()
    mark("XML parts freed")
    verify(graph)
    mark("verify")
    return rows


def run_child(*args: str) -> dict | list:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parent.parent / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                          text=True, env=env)
    if proc.returncode:
        raise RuntimeError(proc.stderr.strip()[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def mb(x: int) -> str:
    return f"{x / 1e6:.1f}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, default=100.0, help="file size to write (MB)")
    p.add_argument("--kinds", default="chain,dense,loop")
    p.add_argument("--phases", action="store_true", help="RSS growth per reader phase")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        what, path = args.child
        print(json.dumps(child_load(path) if what == "load" else child_phases(path)))
        return 0
    failed = False
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            path = Path(tmp) / f"{kind}.xml"
            layers = write_model(path, args.mb, kind)
            size = path.stat().st_size
            r = run_child("load", str(path))
            ratio = r["peak"] / size
            failed |= ratio >= GOAL
            rows.append((kind, str(layers), str(r["nodes"]), mb(size), mb(r["peak"]),
                         f"{ratio:.2f}x"))
            if args.phases:
                print(f"{kind} ({mb(size)} MB): RSS growth after each phase, MB (peak so far)")
                for phase, rss, peak in run_child("phases", str(path)):
                    print(f"  {phase:<18} {mb(rss):>8} ({mb(peak)})")
    head = ("file", "layers", "IR nodes", "file MB", "peak delta MB", "ratio")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(f"peak RSS of itergraph.load minus RSS before it; goal < {GOAL}x the file")
    print(" | ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
