"""``python -m tests.fuzz``: run a campaign, or replay one mutant.

    python -m tests.fuzz --mutants 20000 --seed 1 --out fuzz-out [--batch 50] [--only TEXT]
        [--ops OP,OP...]
    python -m tests.fuzz --replay 'tf/while_counted_op13|loop_trip|123'   # in this process
    python -m tests.fuzz --replay SPEC --keep DIR                         # and keep its files

Exit status: 0 when no mutant has a finding, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from .campaign import run_campaign, summarize
from .mutants import Mutant, build
from .runner import MUTANT_TIMEOUT, run_mutant
from .seeds import seeds
from .verdicts import FINDINGS, verdict


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n")[0])
    p.add_argument("--mutants", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0, help="the campaign's rng seed")
    p.add_argument("--out", type=Path, default=Path("fuzz-out"))
    p.add_argument("--batch", type=int, default=50, help="mutants per child process")
    p.add_argument("--timeout", type=float, default=MUTANT_TIMEOUT, help="seconds per mutant")
    p.add_argument("--only", help="seed models whose id contains this text")
    p.add_argument("--ops", help="comma-separated operators: draw only these")
    p.add_argument("--replay", help="run one mutant SPEC in this process and print its result")
    p.add_argument("--keep", type=Path, help="with --replay: write the mutant's files here")
    a = p.parse_args(argv)
    if a.replay:
        if a.keep:
            built = build(Mutant.parse(a.replay), a.keep)
            print(f"{built.path}: {built.description}")
        with tempfile.TemporaryDirectory() as tmp:
            res = run_mutant(a.replay, Path(tmp))
        res["verdict"] = verdict(res)
        print(json.dumps(res, indent=1, default=str))
        return int(res["verdict"] in FINDINGS)
    ids = [s.id for s in seeds() if a.only in s.id] if a.only else None
    ops = a.ops.split(",") if a.ops else None
    results = run_campaign(a.mutants, a.seed, a.out, a.batch, ids, a.timeout, ops=ops)
    print(summarize(results))
    print(f"\nresults: {a.out / 'results.jsonl'}; findings: {a.out / 'findings.json'}")
    return int(any(r["verdict"] in FINDINGS for r in results))


if __name__ == "__main__":
    sys.exit(main())
