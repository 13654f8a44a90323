"""The ``itergraph`` command: a thin layer over `itergraph.api` (``itergraph --help``).

Exit status, as Polygraphy's: 0 done; 1 a failure at run time (the model cannot be loaded,
run, written or transformed; ``compare``: the engines disagree; ``check``: findings);
2 a usage error (arguments, input files and their names, dtypes and shapes, output paths).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path

from .. import __version__, api
from ..errors import Error, InputError
from . import commands, inspect_commands, run_many
from .files import safe_file_names

__all__ = ["main", "safe_file_names"]

DESCRIPTION = ("Run, inspect, convert and transform the loops of ONNX and OpenVINO IR models "
               "(ONNX Loop/Scan, OpenVINO TensorIterator/Loop). 'itergraph COMMAND --help' "
               "describes each command.")
EPILOG = ("exit status: 0 done; 1 a failure at run time (the model cannot be loaded, run, "
          "written or transformed; compare: the engines disagree; check: findings); 2 a usage "
          "error (arguments, input files and their names, dtypes and shapes, output paths)")
#: `transforms.table.DEFAULT`, named here so that --help does not import the transforms
DEFAULT_PASSES = ("fold-trip-count", "inline-if", "dead-ports", "hoist", "fuse-cells=lstm+gru",
                  "infer-shapes")
MODEL = "the model: .onnx, or OpenVINO IR .xml (its .bin beside it)"


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog):
        super().__init__(prog, max_help_position=32, width=min(100, _columns()))

    def _split_lines(self, text, width):  # names such as fold-trip-count stay whole
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _columns() -> int:
    import shutil

    return shutil.get_terminal_size((100, 24)).columns


def _at_least(low, kind=int):
    """An argparse type: a `kind` number of at least `low`."""
    def parse(text: str):
        try:
            x = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
        if not x >= low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {text}")
        return x
    parse.__name__ = kind.__name__
    return parse


def _add_input(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input", action="append", default=[],
                        metavar="[NAME=]FILE",
                        help="NAME=FILE.npy: one input; FILE.npz: every input of the archive "
                             "by name (in0, in1 ...: by position); NAME=FILE.npz: its array "
                             "NAME, or its only one. Repeatable; inputs not given are generated "
                             "at random (said on stderr)")
    parser.add_argument("--input-shapes", metavar="NAME:[D,...],...",
                        help="shapes of generated inputs with symbolic dimensions, e.g. "
                             "\"input:[1,16000],state:[2,1,128]\"; a symbol sized here "
                             "sizes it in every input")
    parser.add_argument("--value-range", metavar="NAME:[LOW,HIGH],...",
                        help="range of a generated input (default: floats [0,1), integers "
                             "[0,10))")
    parser.add_argument("--seed", type=_at_least(0), default=0,
                        help="seed of generated inputs (default: 0)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="itergraph", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=_Formatter)
    p.add_argument("--version", action="version", version=f"itergraph {__version__}",
                   help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, help, description=None):
        return sub.add_parser(name, help=help, description=description or help,
                              epilog=EPILOG, formatter_class=_Formatter)

    r = command("run", "run a model; inputs from .npy/.npz files or generated at random")
    r.add_argument("model", help=MODEL)
    _add_input(r)
    r.add_argument("--output-dir", metavar="DIR",
                   help="write each output as DIR/NAME.npy (default: only print a summary)")
    r.add_argument("--json", action="store_true",
                   help="print the outputs' shapes, dtypes and statistics as JSON")
    r.add_argument("--backend", default=None, choices=api.BACKENDS,
                   help="the engine (default: auto, the compiled JAX one where it runs the "
                        "whole model and pays off, else NumPy; $ITERGRAPH_BACKEND changes it)")
    _add_max_iterations(r)
    r.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress of the outermost loops on stderr (default: when stderr is "
                        "a terminal)")
    r.set_defaults(fn=commands.cmd_run)
    i = command("info", "inputs, outputs and the tree of loops")
    i.add_argument("model", help=MODEL)
    i.add_argument("--json", action="store_true", help="as JSON")
    i.set_defaults(fn=commands.cmd_info)
    e = command("explain", "which parts compile on a backend and why")
    e.add_argument("model", help=MODEL)
    e.add_argument("--backend", default="jax", choices=api.BACKENDS,
                   help="the engine to explain (default: jax; auto: which engine runs, and "
                        "why)")
    e.add_argument("--json", action="store_true", help="as JSON")
    e.set_defaults(fn=commands.cmd_explain)
    c = command("convert", "convert between ONNX (.onnx) and OpenVINO IR (.xml + .bin)")
    c.add_argument("input", help="the model to read (.onnx or .xml)")
    c.add_argument("output", help="the file to write; its suffix (.onnx or .xml) picks the "
                                  "format")
    c.add_argument("--input-shapes", metavar="NAME:[D,...],...",
                   help="fix input shapes before writing, e.g. input:[1,512]; shapes are then "
                        "inferred and Ifs decided by them removed (OpenVINO's CPU plugin runs "
                        "no If whose outputs' rank is unknown)")
    c.set_defaults(fn=commands.cmd_convert)
    o = command("optimize", "apply loop transforms, say what each did, write the result")
    o.add_argument("input", nargs="?", help="the model to read (.onnx or .xml)")
    o.add_argument("output", nargs="?", help="the file to write (.onnx or .xml)")
    o.add_argument("--passes", metavar="T[=ARG],...",
                   help="comma-separated transforms, e.g. unroll=4,dead-ports (default: "
                        f"{','.join(DEFAULT_PASSES)}; --list names them all)")
    o.add_argument("--target", choices=commands.check_targets(), metavar="TARGET",
                   help="also apply what the portability check for TARGET needs (one of: "
                        + ", ".join(commands.check_targets()) + ")")
    o.add_argument("--list", action="store_true",
                   help="list the transforms, one line each, and exit")
    o.add_argument("-v", "--verbose", action="store_true",
                   help="with --list: each transform's contract too")
    o.set_defaults(fn=commands.cmd_optimize)
    t = command("trace", "per-step values of tensors inside loop bodies, into an .npz file")
    t.add_argument("model", help=MODEL)
    _add_input(t)
    t.add_argument("--tensor", action="append", default=[], metavar="NAME",
                   help="a body tensor to record, LOOP/NAME or NAME; repeatable (default: "
                        "every carried value and loop condition)")
    t.add_argument("--steps", metavar="START:STOP[:STEP]",
                   help="steps of the outermost loop to record; a range or an index per "
                        "loop level, outermost first, separated by commas, e.g. 0:10,2 "
                        "(default: every step)")
    t.add_argument("--backend", default="numpy",
                   choices=("numpy", "jax", "onnxruntime", "openvino"),
                   help="the engine that runs the model (default: numpy)")
    t.add_argument("-o", "--output", required=True, metavar="FILE.npz",
                   help="the trace file to write (required)")
    t.set_defaults(fn=inspect_commands.cmd_trace)
    cp = command("compare", "compare engines' outputs, down to the first divergence in a loop")
    cp.add_argument("model", help=MODEL)
    _add_input(cp)
    cp.add_argument("--json", action="store_true", help="the report as JSON")
    cp.add_argument("--engines", metavar="E,E,...",
                    help="comma-separated, the first is the reference (default: those of "
                         "numpy,jax,onnxruntime,openvino that are installed)")
    cp.add_argument("--atol", type=_at_least(0.0, float), default=1e-5,
                    help="absolute tolerance (default: 1e-05)")
    cp.add_argument("--rtol", type=_at_least(0.0, float), default=1e-5,
                    help="relative tolerance (default: 1e-05)")
    _add_max_iterations(cp)
    cp.set_defaults(fn=inspect_commands.cmd_compare)
    m = command("run-many", "run a model on every .npz feed file of a directory "
                "(restartable)")
    m.add_argument("model", help=MODEL)
    m.add_argument("--inputs", required=True, metavar="DIR",
                   help="directory of .npz feed files, one run each, arrays named as the "
                        "model's inputs (required)")
    m.add_argument("--output-dir", required=True, metavar="OUT",
                   help="one result .npz per feed file, named as it; finished ones are "
                        "skipped on a restart (required)")
    m.add_argument("--ray", metavar="ADDRESS|local",
                   help="run on Ray workers: a cluster address, or 'local' (default: in this "
                        "process)")
    m.add_argument("--workers", type=int, default=1, help="Ray workers (with --ray; default: 1)")
    m.add_argument("--batch-size", type=int, default=16,
                   help="feeds stacked into one run where that is provably exact "
                        "(default: 16)")
    m.add_argument("--backend", default="numpy", choices=api.BACKENDS,
                   help="the engine (default: numpy)")
    m.set_defaults(fn=run_many.cmd_run_many)
    k = command("check", "which loop features a target refuses, and the fix")
    k.add_argument("input", help="the model to check (.onnx or .xml)")
    k.add_argument("--target", required=True, choices=commands.check_targets(),
                   help="the runtime or converter to check for (required)")
    k.add_argument("--fix", metavar="OUT", help="apply the fixes and write the result to OUT")
    k.add_argument("--json", action="store_true", help="the report as JSON")
    k.set_defaults(fn=commands.cmd_check)
    v = command("view", "write one offline HTML page of the loops: port maps, body graphs, "
                "and a trace's plots")
    v.add_argument("model", help=MODEL)
    v.add_argument("--trace", metavar="FILE.npz", help="a trace file (itergraph trace) to "
                                                      "plot step by step")
    v.add_argument("-o", "--output", default="loops.html", metavar="FILE.html",
                   help="the page to write (default: loops.html)")
    v.set_defaults(fn=inspect_commands.cmd_view)
    pr = command("profile", "time per loop and per body node, weighted by steps")
    pr.add_argument("model", help=MODEL)
    _add_input(pr)
    pr.add_argument("--backend", default="numpy", choices=api.BACKENDS,
                    help="the engine to time (default: numpy)")
    _add_max_iterations(pr)
    pr.add_argument("--repeat", type=_at_least(1), default=5,
                    help="timed runs after a warm-up (default: 5; numpy: their median and "
                         "spread; jax: the best)")
    pr.add_argument("--json", action="store_true", help="the profile as JSON")
    pr.set_defaults(fn=inspect_commands.cmd_profile)
    return p


def _add_max_iterations(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-iterations", type=int, metavar="N",
                        help="stop a loop with an error after N iterations (default: no "
                             "limit)")


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (see the module docstring). Called as the
    program (no `argv`), it ends the process itself where a compile is still under way on a
    worker thread (``--backend auto`` answers the first call on NumPy and compiles behind it):
    XLA aborts the process when the interpreter shuts down under a running compile."""
    code = _main(argv)
    if argv is None and any(t.name == "itergraph-compile" and t.is_alive()
                            for t in threading.enumerate()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _main(argv: list[str] | None) -> int:
    import warnings

    args = _parser().parse_args(argv)
    with warnings.catch_warnings():
        # `import openvino` forks a process for its telemetry; JAX, once running, warns on
        # every fork of its process that it may deadlock (it cannot: the child runs no JAX)
        warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called",
                                category=RuntimeWarning)
        warnings.showwarning = _show_warning
        return _run(args)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """itergraph's own warnings as one line, ``itergraph: warning: ...`` (no source line)."""
    import warnings

    from ..errors import LeniencyWarning

    if issubclass(category, LeniencyWarning) or "itergraph" in Path(filename).parts:
        print(f"itergraph: warning: {message}", file=file or sys.stderr)
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line),
              file=file or sys.stderr, end="")


def _run(args) -> int:
    try:
        code = args.fn(args)
    except InputError as e:
        print(f"itergraph: error: {e}", file=sys.stderr)
        code = 2
    except Error as e:
        print(f"itergraph: error: {e}", file=sys.stderr)
        code = 1
    except BrokenPipeError:  # the reader of our output stopped early (| head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("itergraph: interrupted", file=sys.stderr)
        return 130
    return code
