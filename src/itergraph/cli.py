"""The ``itergraph`` command: a thin layer over `itergraph.api`.

    itergraph run MODEL --input NAME=FILE.npy ... [--output-dir DIR] [--backend numpy|jax|auto]
    itergraph info MODEL
    itergraph explain MODEL [--backend jax]
    itergraph convert IN OUT          (.onnx <-> .xml)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from . import api
from .errors import Error, InputError


def _summary(value) -> str:
    if value is None:
        return "empty optional"
    if isinstance(value, list):
        return f"sequence of {len(value)}: [" + ", ".join(_summary(v) for v in value[:4]) + \
            (", ...]" if len(value) > 4 else "]")
    a = np.asarray(value)
    head = f"shape {a.shape} dtype {a.dtype}"
    if a.size == 0:
        return head + " (empty)"
    if a.dtype.kind in "biuf":
        f = a.astype(np.float64)
        stats = f"min {f.min():.6g} max {f.max():.6g} mean {f.mean():.6g}"
        flat = ", ".join(f"{x:.6g}" for x in f.reshape(-1)[:6]) + (" ..." if a.size > 6 else "")
        return f"{head}  {stats}  [{flat}]"
    return f"{head}  {a.reshape(-1)[:6]}"


def _parse_inputs(items: list[str]) -> dict:
    feeds = {}
    for item in items:
        name, sep, file = item.partition("=")
        if not sep:
            raise InputError(f"--input expects NAME=FILE.npy, got '{item}'")
        try:
            feeds[name] = np.load(file, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise InputError(f"cannot read input '{name}' from '{file}': {e}") from e
    return feeds


def cmd_run(args) -> int:
    model = api.load(args.model)
    outs = model.run(_parse_inputs(args.input), backend=args.backend,
                     max_iterations=args.max_iterations)
    out_dir = Path(args.output_dir) if args.output_dir else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    for name, value in outs.items():
        print(f"{name}: {_summary(value)}")
        if out_dir is not None:
            if isinstance(value, list) or value is None:
                print(f"  (not written: {name} is not a tensor)")
            else:
                np.save(out_dir / f"{name}.npy", np.asarray(value))
    return 0


def cmd_info(args) -> int:
    print(api.load(args.model).info())
    return 0


def cmd_explain(args) -> int:
    print(api.load(args.model).explain(backend=args.backend))
    return 0


def cmd_convert(args) -> int:
    api.save(api.load(args.input), args.output)
    print(f"wrote {args.output}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="itergraph", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a model on inputs from .npy files")
    r.add_argument("model")
    r.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    r.add_argument("--output-dir")
    r.add_argument("--backend", default="numpy", choices=api.BACKENDS)
    r.add_argument("--max-iterations", type=int)
    r.set_defaults(fn=cmd_run)
    i = sub.add_parser("info", help="inputs, outputs and the tree of loops")
    i.add_argument("model")
    i.set_defaults(fn=cmd_info)
    e = sub.add_parser("explain", help="which parts compile on a backend and why")
    e.add_argument("model")
    e.add_argument("--backend", default="jax", choices=api.BACKENDS)
    e.set_defaults(fn=cmd_explain)
    c = sub.add_parser("convert", help="convert between .onnx and .xml")
    c.add_argument("input")
    c.add_argument("output")
    c.set_defaults(fn=cmd_convert)
    args = p.parse_args(argv)
    try:
        return args.fn(args)
    except Error as e:
        print(f"itergraph: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
