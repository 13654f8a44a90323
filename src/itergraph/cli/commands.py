"""The commands that load, run, convert, transform and check one model."""

from __future__ import annotations

from pathlib import Path

from .. import api
from ..errors import InputError
from .files import feeds_for, prepare_output_dir, summary, write_npy


def cmd_run(args) -> int:
    model = api.load(args.model)
    files = None
    if args.output_dir:
        files = prepare_output_dir(Path(args.output_dir), [v.name for v in model.outputs])
    from ..inspect.progress import Reporter, wanted

    outs = model.run(feeds_for(model.graph, args), backend=args.backend,
                     max_iterations=args.max_iterations,
                     progress=Reporter() if wanted(args.progress) else None)
    if args.json:
        import json

        print(json.dumps({name: _value_dict(value) for name, value in outs.items()}, indent=1))
    for name, value in outs.items():
        if not args.json:
            print(f"{name}: {summary(value)}")
        if files is None:
            continue
        if isinstance(value, list) or value is None:
            print(f"  (not written: {name} is not a tensor)")
            continue
        path = files[name]
        if path.name != f"{name}.npy":
            print(f"  (written as {path}: the output's name is not a safe file name)")
        write_npy(path, value)
    return 0


def _value_dict(value) -> dict:
    """An output as plain data: shape, dtype and statistics (``run --json``)."""
    import numpy as np

    if value is None:
        return {"kind": "none"}
    if isinstance(value, list):
        return {"kind": "sequence", "length": len(value),
                "items": [_value_dict(v) for v in value[:16]]}
    a = np.asarray(value)
    out = {"kind": "tensor", "shape": list(a.shape), "dtype": str(a.dtype)}
    if a.size and a.dtype.kind in "fiub":
        f = a.astype(np.float64)
        finite = f[np.isfinite(f)]
        out.update(min=float(finite.min()) if finite.size else None,
                   max=float(finite.max()) if finite.size else None,
                   mean=float(finite.mean()) if finite.size else None,
                   non_finite=int(f.size - finite.size))
    return out


def cmd_info(args) -> int:
    model = api.load(args.model)
    if args.json:
        import json

        from ..describe import describe_dict

        print(json.dumps(describe_dict(model.graph), indent=1))
        return 0
    text = model.info()
    if str(args.model).lower().endswith(".xml"):  # an IR has no ONNX opsets of its own
        text = "\n".join("format: OpenVINO IR, read as ONNX (" + ln[len("opsets: "):] + ")"
                         if ln.startswith("opsets: ") else ln for ln in text.split("\n"))
    print(text)
    return 0


def cmd_explain(args) -> int:
    model = api.load(args.model)
    if args.json:
        import json

        print(json.dumps(model.explanation(backend=args.backend), indent=1))
    else:
        print(model.explain(backend=args.backend))
    return 0


def cmd_convert(args) -> int:
    model = api.load(args.input)
    if args.input_shapes:
        model = model.with_input_shapes(args.input_shapes)
    api.save(model, args.output)
    print(f"wrote {args.output}")
    return 0


def cmd_optimize(args) -> int:
    from .. import targeting, transforms

    if args.list:
        print("default pipeline (no --passes, no --target): "
              + ",".join(transforms.table.DEFAULT) + "\n")
        for t in transforms.TRANSFORMS.values():
            arg = f"[={t.argument}]" if t.argument else ""
            print(f"{t.name}{arg}: {t.summary}")
            if args.verbose:
                print("\n    " + t.contract().replace("\n", "\n    ") + "\n")
        return 0
    if not args.input or not args.output:
        raise InputError("optimize needs IN and OUT (or --list)")
    before = api.load(args.input)
    report: list = []
    model = targeting.optimize(before, passes=args.passes, target=args.target, report=report)
    api.save(model, args.output)
    for applied in report:
        print(applied.line())
    print(_size_report(before, model, args.input, args.output))
    print(f"wrote {args.output}")
    return 0


def _size_report(before, after, src, dst) -> str:
    """Nodes, loops, op counts that changed and file sizes, before -> after (as onnxsim)."""
    from collections import Counter

    def ops(m):
        return Counter(n.op_type for _, n in m.graph.walk())

    a, b = ops(before), ops(after)
    lines = [f"nodes {sum(a.values())} -> {sum(b.values())}, loops {a['Loop']} -> "
             f"{b['Loop']}, file {_kib(src)} -> {_kib(dst)}"]
    changed = [f"{op} {a[op]} -> {b[op]}" for op in sorted(set(a) | set(b)) if a[op] != b[op]]
    if changed:
        lines.append("ops: " + ", ".join(changed))
    return "\n".join(lines)


def _kib(path) -> str:
    import os

    files = [str(path)] + ([os.path.splitext(str(path))[0] + ".bin"]
                           if str(path).lower().endswith(".xml") else [])
    size = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
    return f"{size / 1024:.1f} KiB"


def check_targets() -> tuple[str, ...]:
    from ..portability.rules import TARGETS

    return TARGETS


def cmd_check(args) -> int:
    from .. import portability, targeting

    report = portability.check(args.input, args.target)
    if args.json:
        import json

        if args.fix:
            raise InputError("check --json reports; run --fix without it")
        print(json.dumps(report.as_dict(), indent=1))
        return 0 if report.ok else 1
    print(report.text())
    if args.fix:
        fixed = targeting.optimize(args.input, passes=(), target=args.target)
        api.save(fixed, args.fix)
        after = portability.check(args.fix, args.target)
        print(f"wrote {args.fix} (transforms: {', '.join(report.fixes()) or 'none'}); "
              + ("it passes " + args.target if after.ok else
                 f"{len(after.findings)} finding(s) remain"))
        return 0 if after.ok else 1
    return 0 if report.ok else 1
