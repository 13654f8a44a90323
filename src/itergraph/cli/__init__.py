"""The ``itergraph`` command: a thin layer over `itergraph.api`.

    itergraph run MODEL --input NAME=FILE.npy ... [--output-dir DIR] [--backend auto|numpy|jax]
                                  [--progress/--no-progress]
                                  (DIR/NAME.npy per output; see `safe_file_names`)
    itergraph info MODEL
    itergraph explain MODEL [--backend jax]
    itergraph convert IN OUT          (.onnx <-> .xml)
    itergraph optimize IN OUT [--passes a,b=K,...] [--target T]
    itergraph optimize --list         (the transforms and their contracts)
    itergraph trace MODEL --input NAME=FILE.npy ... [--tensor NAME ...] [--steps 0:10]
                    [--backend numpy|jax|onnxruntime|openvino] -o trace.npz
    itergraph compare MODEL --input NAME=FILE.npy ... [--engines numpy,jax,onnxruntime,openvino]
                    [--atol A] [--rtol R]     (exit 0: all agree, 1: they disagree, 2: error)
    itergraph run-many MODEL --inputs DIR --output-dir OUT [--ray ADDRESS|local]
                                  [--batch-size N] [--backend B] [--workers N]
    itergraph check IN --target T [--fix OUT]   (exit 0: passes, 1: findings, 2: error)
    itergraph view MODEL [--trace trace.npz] [-o loops.html]
    itergraph profile MODEL --input NAME=FILE.npy ... [--backend numpy|jax]
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import __version__, api
from ..errors import Error
from . import commands, inspect_commands, run_many
from .files import safe_file_names

__all__ = ["main", "safe_file_names"]


def _add_input(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input", action="append", default=[],
                        metavar="NAME=FILE.npy|FILE.npz",
                        help="an input from a .npy file, or every input from an .npz archive "
                             "(by name); repeatable. Inputs not given are generated at random "
                             "(said on stderr)")
    parser.add_argument("--input-shapes", metavar="NAME:[D,...],...",
                        help="shapes of generated inputs whose dimensions are symbolic")
    parser.add_argument("--value-range", metavar="NAME:[LOW,HIGH],...",
                        help="range of a generated input (default: floats [0,1), integers "
                             "[0,10))")
    parser.add_argument("--seed", type=int, default=0, help="seed of generated inputs (0)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="itergraph", description=__doc__.splitlines()[0],
        epilog="exit status: 0 done; 1 compare: the engines disagree, check: findings; "
               "2 an error (the message names it)")
    p.add_argument("--version", action="version", version=f"itergraph {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a model on inputs from .npy/.npz files")
    r.add_argument("model")
    _add_input(r)
    r.add_argument("--output-dir", help="write each output as DIR/NAME.npy")
    r.add_argument("--json", action="store_true",
                   help="print the outputs' shapes, dtypes and statistics as JSON")
    r.add_argument("--backend", default=None, choices=api.BACKENDS,
                   help="the engine (default: auto, the compiled JAX one where it runs the "
                        "whole model and pays off, else NumPy; $ITERGRAPH_BACKEND changes it)")
    r.add_argument("--max-iterations", type=int,
                   help="stop a loop with an error after this many iterations")
    r.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress of the outermost loops on stderr (default: when a terminal)")
    r.set_defaults(fn=commands.cmd_run)
    i = sub.add_parser("info", help="inputs, outputs and the tree of loops")
    i.add_argument("--json", action="store_true", help="as JSON")
    i.add_argument("model")
    i.set_defaults(fn=commands.cmd_info)
    e = sub.add_parser("explain", help="which parts compile on a backend and why")
    e.add_argument("model")
    e.add_argument("--backend", default="jax", choices=api.BACKENDS)
    e.add_argument("--json", action="store_true", help="as JSON")
    e.set_defaults(fn=commands.cmd_explain)
    c = sub.add_parser("convert", help="convert between .onnx and .xml")
    c.add_argument("input")
    c.add_argument("output")
    c.add_argument("--input-shapes", metavar="NAME:[D,...],...",
                   help="fix input shapes before writing, e.g. input:[1,512]; shapes are then "
                        "inferred and Ifs decided by them removed (OpenVINO's CPU plugin runs "
                        "no If whose outputs' rank is unknown)")
    c.set_defaults(fn=commands.cmd_convert)
    o = sub.add_parser("optimize", help="apply loop transforms and write the result")
    o.add_argument("input", nargs="?")
    o.add_argument("output", nargs="?")
    o.add_argument("--passes", help="comma-separated transforms, e.g. unroll=4,dead-ports "
                   "(default: the pipeline --list names first)")
    o.add_argument("--target", help="also apply what the portability check for T needs")
    o.add_argument("--list", action="store_true", help="list the transforms, one per line")
    o.add_argument("-v", "--verbose", action="store_true",
                   help="with --list: each transform's contract too")
    o.set_defaults(fn=commands.cmd_optimize)
    t = sub.add_parser("trace", help="per-step values of tensors inside loop bodies")
    t.add_argument("model")
    _add_input(t)
    t.add_argument("--tensor", action="append", default=[], metavar="NAME",
                   help="body tensor (default: every carried value and loop condition)")
    t.add_argument("--steps", help="START:STOP[:STEP] of the outermost loop, or one per level")
    t.add_argument("--backend", default="numpy",
                   choices=("numpy", "jax", "onnxruntime", "openvino"))
    t.add_argument("-o", "--output", required=True, help="trace file (.npz)")
    t.set_defaults(fn=inspect_commands.cmd_trace)
    cp = sub.add_parser("compare", help="compare engines, down to the first divergence in a loop")
    cp.add_argument("model")
    _add_input(cp)
    cp.add_argument("--json", action="store_true", help="the report as JSON")
    cp.add_argument("--engines", help="comma-separated, the first is the reference (default: "
                    "those of numpy,jax,onnxruntime,openvino that are installed)")
    cp.add_argument("--atol", type=float, default=1e-5)
    cp.add_argument("--rtol", type=float, default=1e-5)
    cp.add_argument("--max-iterations", type=int)
    cp.set_defaults(fn=inspect_commands.cmd_compare)
    m = sub.add_parser("run-many", help="run a model on every .npz feed file of a directory")
    m.add_argument("model")
    m.add_argument("--inputs", required=True, metavar="DIR")
    m.add_argument("--output-dir", required=True, metavar="OUT")
    m.add_argument("--ray", metavar="ADDRESS|local", help="run on Ray workers")
    m.add_argument("--workers", type=int, default=1, help="Ray workers (with --ray)")
    m.add_argument("--batch-size", type=int, default=16)
    m.add_argument("--backend", default="numpy", choices=api.BACKENDS)
    m.set_defaults(fn=run_many.cmd_run_many)
    k = sub.add_parser("check", help="which loop features a target refuses, and the fix")
    k.add_argument("input")
    k.add_argument("--target", required=True, choices=commands.check_targets())
    k.add_argument("--fix", metavar="OUT", help="apply the fixes and write the result to OUT")
    k.add_argument("--json", action="store_true", help="the report as JSON")
    k.set_defaults(fn=commands.cmd_check)
    v = sub.add_parser("view", help="write an HTML page of the loops (and a trace's plots)")
    v.add_argument("model")
    v.add_argument("--trace", help="a trace file (.npz) to plot step by step")
    v.add_argument("-o", "--output", default="loops.html")
    v.set_defaults(fn=inspect_commands.cmd_view)
    pr = sub.add_parser("profile", help="time per loop and per body node, weighted by steps")
    pr.add_argument("model")
    _add_input(pr)
    pr.add_argument("--backend", default="numpy", choices=api.BACKENDS)
    pr.add_argument("--max-iterations", type=int)
    pr.add_argument("--repeat", type=int, default=5,
                    help="timed runs after a warm-up (numpy: their median and spread; jax: the "
                         "best)")
    pr.add_argument("--json", action="store_true", help="the profile as JSON")
    pr.set_defaults(fn=inspect_commands.cmd_profile)
    args = p.parse_args(argv)
    try:
        return args.fn(args)
    except Error as e:
        print(f"itergraph: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of our output stopped early (| head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
