"""Measure the ONNX -> OpenVINO IR direction over the ONNX node-test suite, by hand:

    PYTHONPATH=src python tests/openvino/measure_ir_node_suite.py [NAME_PART ...] [--json F]

Every node-suite case that OpenVINO's own ONNX frontend (``Core().read_model`` on the .onnx)
runs to the expected outputs is read by itergraph, written as IR and run by OpenVINO's CPU
plugin (`test_ir_from_onnx_node_suite.outcome`). Each is classified: pass / refused by the
writer (grouped by the op the refusal names) / OpenVINO error / WRONG (other outputs) / raw
error (an itergraph exception that is not an ``UnsupportedError``). Prints the counts and the
non-passing cases grouped by op type. With NAME_PART arguments only the cases whose name holds
one of them are run. ``--json F`` also writes ``{case: [kind, detail]}`` to F. ``--beyond``
also writes and runs the cases OpenVINO's own frontend does not run to the expected outputs
(those with tensors only) and reports them apart: what itergraph's IR adds.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import openvino as ov

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "conformance"))
from node_suite import cases  # noqa: E402
from test_ir_from_onnx_node_suite import REFUSED, outcome  # noqa: E402

KINDS = ("ok", "refused", "openvino error", "wrong", "raw error")
_OP = re.compile(r"cannot express op (\S+)")


def case_ops(case) -> str:
    """The op types of the case's graph (its own nodes, not the Constant feeding them)."""
    ops = sorted({n.op_type for n in case.model.graph.node} - {"Constant"})
    return "+".join(ops) or "Constant"


def group(kind: str, detail: str, case) -> str:
    if kind == "refused":
        m = _OP.search(detail)
        if m:
            return m.group(1)
        for key, why in REFUSED.items():
            if key in detail:
                return f"{case_ops(case)} (known limit: {why})"
    return case_ops(case)


def main(argv: list[str]) -> int:
    out_json = None
    if "--json" in argv:
        i = argv.index("--json")
        out_json = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    beyond = "--beyond" in argv
    argv = [a for a in argv if a != "--beyond"]
    todo = [c for c in cases() if not argv or any(p in c.name for p in argv)]
    extra: dict[str, tuple[str, str]] = {}
    extra_groups: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    core = ov.Core()
    res: dict[str, tuple[str, str]] = {}
    groups: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    skipped = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in todo:
            got = outcome(case, Path(d), core)
            if got is None:
                skipped += 1
                got = outcome(case, Path(d), core, oracle=False) if beyond else None
                if got is not None:
                    extra[case.name] = got
                    extra_groups[got[0]][group(*got, case)].append(f"{case.name}: "
                                                                   f"{got[1][:300]}")
                continue
            kind, detail = got
            res[case.name] = got
            if kind != "ok":
                groups[kind][group(kind, detail, case)].append(f"{case.name}: {detail[:300]}")
    counts = Counter(kind for kind, _ in res.values())
    print(f"{len(todo)} node-suite cases; {skipped} not run to the expected outputs by "
          f"OpenVINO's own ONNX frontend; {len(res)} measured "
          f"({time.perf_counter() - t0:.0f} s)")
    for k in KINDS:
        n = counts.get(k, 0)
        print(f"  {k:15} {n:5}  ({100.0 * n / max(len(res), 1):.1f}%)")
    for k in KINDS[1:]:
        if not groups.get(k):
            continue
        print(f"\n== {k}: {counts[k]} case(s), by op ==")
        for op, items in sorted(groups[k].items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print(f"-- {op}: {len(items)}")
            for line in sorted(items):
                print(f"     {line}")
    if beyond:
        counts = Counter(kind for kind, _ in extra.values())
        print(f"\n==== beyond OpenVINO's frontend: {len(extra)} of the {skipped} cases it does "
              "not run have only tensors; itergraph's IR on them, against the expected "
              "outputs ====")
        for k in KINDS:
            print(f"  {k:15} {counts.get(k, 0):5}")
        for k in KINDS:
            print(f"\n== beyond, {k}: {counts.get(k, 0)} case(s), by op ==")
            for op, items in sorted(extra_groups[k].items(), key=lambda kv: (-len(kv[1]), kv[0])):
                print(f"-- {op}: {len(items)}")
                if k != "ok":
                    for line in sorted(items):
                        print(f"     {line}")
    if out_json:
        Path(out_json).write_text(json.dumps({"measured": res, "beyond": extra}, indent=1,
                                             sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    sys.exit(main(sys.argv[1:]))
