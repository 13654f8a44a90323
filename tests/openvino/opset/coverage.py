"""Op coverage of OpenVINO opsets 1-16: which operation types itergraph reads and writes.

The op list comes from OpenVINO's own Python package: every public function of the
``openvino.opsetN`` modules (N = 1..16) creates its node through a node factory call naming
the op type (``create("Convolution", ...)``); the module defining the function names the op
version. Structural ops built from classes (Parameter, Constant, Result, If, Loop,
TensorIterator) are added by name.

Columns:
- ``read``: the OpenVINO reader has a translator for the op type (`IMPORTERS`);
- ``emit``: the OpenVINO writer emits the op type from some ONNX op (the op type is named in
  a writer module, or by a row of `SAME_OPS`); an op read as ONNX ops (``NotEqual`` ->
  ``Equal`` + ``Not``) round-trips without being emitted, which ``write`` measures;
- ``numpy``, ``jax``, ``write``, ``onnx``: with ``--checked FILE`` (the JSON lines the
  conformance tests append when ``IG_OV_OPSET_RECORD`` names a file: `ov_helpers.record`),
  the op type was in a model that itergraph read and ran on NumPy / on JAX to OpenVINO's
  outputs, wrote back for OpenVINO to run to the same outputs, and converted to ONNX for
  ONNX Runtime (or OpenVINO's ONNX frontend, for ``org.openvinotoolkit`` ops) to run to the
  same outputs. Ops no ONNX runtime can run (`NO_ONNX`, with the reason) count apart.

Run: ``PYTHONPATH=src python tests/openvino/opset/coverage.py [--checked FILE]``.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import sys
from pathlib import Path

STRUCTURAL = {"Parameter": "opset1", "Constant": "opset1", "Result": "opset1",
              "If": "opset8", "Loop": "opset5", "TensorIterator": "opset1"}
OPSETS = range(1, 17)
#: written by every model the writer writes (its inputs, weights and outputs)
STRUCTURAL_WRITTEN = {"Parameter", "Constant", "Result"}


def opset_ops() -> dict[str, set[str]]:
    """Op type -> the opset versions (``"opsetN"``) of it in openvino.opset1..16."""
    found: dict[str, set[str]] = {k: {v} for k, v in STRUCTURAL.items()}
    for n in OPSETS:
        mod = importlib.import_module(f"openvino.opset{n}")
        for name in dir(mod):
            fn = getattr(mod, name)
            if name.startswith("_") or not inspect.isfunction(fn):
                continue
            try:
                src = inspect.getsource(fn)
            except (OSError, TypeError):
                continue
            where = inspect.unwrap(fn).__module__.split(".")
            version = next((p for p in where if re.fullmatch(r"opset\d+", p)), f"opset{n}")
            for op in re.findall(r'create\(\s*"(\w+)"', src):
                found.setdefault(op, set()).add(version)
    return found


def read_types() -> set[str]:
    from itergraph.frontends.openvino import reader  # noqa: F401  (registers translators)
    from itergraph.frontends.openvino.import_table import IMPORTERS

    return {op for _, op in IMPORTERS.ops()} | {"Parameter", "Constant", "Result"}


# the spellings OpenVINO reads and writes besides the op type names
ALIASES = {"SoftMax": "Softmax", "ReLU": "Relu", "PReLU": "PRelu", "Const": "Constant"}


def written_types(known: set[str]) -> set[str]:
    """Op types named by a string literal in a writer module (the writer's modules name only
    the layers they write), or by a row of `SAME_OPS`."""
    from itergraph.frontends.openvino import writer
    from itergraph.frontends.openvino.same_ops import SAME_OPS

    out = {r.openvino for r in SAME_OPS} | {"Parameter", "Constant", "Result"}
    pkg = Path(writer.__file__).parent
    for path in [*pkg.glob("export_*.py"), pkg / "net_writer.py", pkg / "writer.py"]:
        for s in re.findall(r'"(\w+)"', path.read_text()):
            s = ALIASES.get(s, s)
            if s in known:
                out.add(s)
    return out


STAGES = ("numpy", "jax", "write", "onnx")

#: op types whose ONNX copy no runtime runs: no ONNX op computes them and OpenVINO's ONNX
#: frontend reads no ``org.openvinotoolkit`` op of that name (the copy holds one all the same,
#: which itergraph reads back), or ONNX has no such value
NO_ONNX = {
    "CTCLoss": "no ONNX op; OpenVINO's ONNX frontend has none",
    "SparseFillEmptyRows": "no ONNX op; OpenVINO's ONNX frontend has none",
    "RandomUniform": "ONNX's RandomUniform draws other numbers (no Philox/MT19937 choice)",
    "Multinomial": "ONNX's Multinomial draws other numbers",
    "StringTensorPack": "no ONNX op packs strings from bytes",
    "StringTensorUnpack": "no ONNX op unpacks strings to bytes",
    "Inverse": "no ONNX op inverts a matrix; OpenVINO's ONNX frontend has none",
    "MatrixNms": "no ONNX op; OpenVINO's ONNX frontend has none",
    "MulticlassNms": "no ONNX op; OpenVINO's ONNX frontend has none",
    "NMSRotated": "no ONNX op; OpenVINO's ONNX frontend has none",
    "ROIAlignRotated": "no ONNX op; OpenVINO's ONNX frontend has none",
    "PSROIPooling": "no ONNX op; OpenVINO's ONNX frontend has none",
    "DeformablePSROIPooling": "no ONNX op; OpenVINO's ONNX frontend has none",
    "Proposal": "no ONNX op; OpenVINO's ONNX frontend has none",
}


def checked_types(path: str | None) -> dict[str, set[str]]:
    """Stage -> the op types in a model that passed it (see the module docstring)."""
    out: dict[str, set[str]] = {k: set() for k in STAGES}
    if not path or not Path(path).exists():
        return out
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        for stage in rec.get("stages", []):
            out[stage] |= {ALIASES.get(t, t) for t in rec["types"]}
    return out


def table(checked_file: str | None = None) -> list[tuple]:
    """(op type, versions, read, emit, numpy, jax, write, onnx) per op type; onnx is None for
    `NO_ONNX` ops."""
    ops = opset_ops()
    r, w, c = read_types(), written_types(set(ops)), checked_types(checked_file)
    return [(op, ",".join(sorted(ops[op], key=lambda v: int(v[5:]))), op in r, op in w,
             op in c["numpy"], op in c["jax"], op in c["write"] or op in STRUCTURAL_WRITTEN,
             None if op in NO_ONNX else op in c["onnx"]) for op in sorted(ops)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checked", help="JSON lines written by the tests (IG_OV_OPSET_RECORD)")
    ap.add_argument("--missing", action="store_true",
                    help="list only ops missing from some column")
    args = ap.parse_args(argv)
    rows = table(args.checked)
    checked = bool(args.checked)
    mark = {True: "x", False: ".", None: "n/a"}
    cols = ("read", "emit") + (STAGES if checked else ())
    print(f"{'op type':28} {'versions':22} " + " ".join(f"{c:5}" for c in cols))
    for row in rows:
        flags = row[2:4] + (row[4:] if checked else ())
        if args.missing and all(f is not False for f in flags):
            continue
        print(f"{row[0]:28} {row[1]:22} " + " ".join(f"{mark[f]:5}" for f in flags))
    n = len(rows)
    totals = [f"read {sum(x[2] for x in rows)}", f"emit {sum(x[3] for x in rows)}"]
    if checked:
        totals += [f"{s} {sum(bool(x[4 + k]) for x in rows)}" for k, s in enumerate(STAGES)]
        onnx_ok = sum(x[7] is not None for x in rows)
        totals[-1] += f" of {onnx_ok} (n/a: {n - onnx_ok})"
    print(f"\n{n} op types in opsets 1-16: " + ", ".join(totals))
    if checked and args.missing:
        print("\nno ONNX runtime runs the ONNX copy of:")
        for op, why in sorted(NO_ONNX.items()):
            print(f"  {op}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
