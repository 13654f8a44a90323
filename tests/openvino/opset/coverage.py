"""Op coverage of OpenVINO opsets 1-16: which operation types itergraph reads and writes.

The op list comes from OpenVINO's own Python package: every public function of the
``openvino.opsetN`` modules (N = 1..16) creates its node through a node factory call naming
the op type (``create("Convolution", ...)``); the module defining the function names the op
version. Structural ops built from classes (Parameter, Constant, Result, If, Loop,
TensorIterator) are added by name.

Columns:
- ``read``: the OpenVINO reader has a translator for the op type (`IMPORTERS`);
- ``write``: the OpenVINO writer emits the op type from some ONNX op (the op type is named in
  a writer module, or by a row of `SAME_OPS`);
- ``checked``: with ``--checked FILE`` (the JSON lines `ov_helpers.check_model` appends when
  ``IG_OV_OPSET_RECORD`` names a file), the op type was in a model that itergraph read, ran on
  NumPy and JAX against OpenVINO and wrote back for OpenVINO to run again.

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


def checked_types(path: str | None) -> set[str]:
    if not path or not Path(path).exists():
        return set()
    out: set[str] = set()
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        if rec.get("passed"):
            out |= {ALIASES.get(t, t) for t in rec["types"]}
    return out


def table(checked_file: str | None = None) -> list[tuple[str, str, bool, bool, bool]]:
    ops = opset_ops()
    r, w, c = read_types(), written_types(set(ops)), checked_types(checked_file)
    return [(op, ",".join(sorted(ops[op], key=lambda v: int(v[5:]))), op in r, op in w,
             op in c) for op in sorted(ops)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checked", help="JSON lines written by check_model (IG_OV_OPSET_RECORD)")
    ap.add_argument("--missing", action="store_true", help="list only ops not read or written")
    args = ap.parse_args(argv)
    rows = table(args.checked)
    mark = {True: "x", False: "."}
    print(f"{'op type':32} {'versions':28} read write checked")
    for op, versions, r, w, c in rows:
        if args.missing and r and w:
            continue
        print(f"{op:32} {versions:28} {mark[r]:4} {mark[w]:5} {mark[c]}")
    n = len(rows)
    print(f"\n{n} op types in opsets 1-16: read {sum(x[2] for x in rows)}, "
          f"write {sum(x[3] for x in rows)}, checked {sum(x[4] for x in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
