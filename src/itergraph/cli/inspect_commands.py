"""The commands that look inside loops: trace, compare, view, profile."""

from __future__ import annotations

from .. import api
from .files import feeds_for


def cmd_trace(args) -> int:
    model = api.load(args.model)
    t = model.trace(feeds_for(model.graph, args), tensors=args.tensor or None, steps=args.steps,
                    backend=args.backend, path=args.output)
    for key, e in t.items():
        shape = f"{len(e.values)} ragged steps" if e.ragged else f"values {e.values.shape}"
        print(f"{key} ({e.kind}): {len(e)} steps, {shape}")
    if t.skipped:
        print(f"not traced (not tensors; name one with --tensor to see why): "
              f"{', '.join(t.skipped)}")
    print(f"wrote {args.output}")
    return 0


def cmd_compare(args) -> int:
    from ..inspect.compare import compare

    model = api.load(args.model)
    report = compare(model, feeds_for(model.graph, args), engines=args.engines,
                     atol=args.atol, rtol=args.rtol, max_iterations=args.max_iterations)
    if args.json:
        import json

        print(json.dumps(report.as_dict(), indent=1))
    else:
        print(report.text())
    return min(report.status, 1)  # an engine that failed on the model: a failure, not usage


def cmd_view(args) -> int:
    from ..inspect import view

    print(f"wrote {view.write(args.model, args.output, trace=args.trace)}")
    return 0


def cmd_profile(args) -> int:
    from ..inspect.profile import profile

    model = api.load(args.model)
    result = profile(model, feeds_for(model.graph, args), backend=args.backend,
                     max_iterations=args.max_iterations, repeat=args.repeat)
    if args.json:
        import json

        print(json.dumps(result.as_dict(), indent=1))
    else:
        print(result.text())
    return 0
