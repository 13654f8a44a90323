"""A campaign: many mutants run in batches, their results appended to ``results.jsonl``,
progress on stderr, and at the end a summary of verdict counts and the distinct findings
(`summarize`), also written to ``findings.json``."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from .mutants import campaign
from .runner import MUTANT_TIMEOUT, run_batch
from .verdicts import FINDINGS, ORDER, findings, key, verdict


def run_campaign(n: int, rng_seed: int, out: Path, batch: int = 50,
                 seed_ids: list[str] | None = None, timeout: float = MUTANT_TIMEOUT,
                 log=sys.stderr, ops: list[str] | None = None) -> list[dict]:
    """Run `n` mutants of campaign `rng_seed` (of operators `ops` alone, if given); results
    (with their verdicts) in order."""
    out.mkdir(parents=True, exist_ok=True)
    specs = [m.spec for m in campaign(n, rng_seed, seed_ids, ops)]
    results: list[dict] = []
    counts: Counter = Counter()
    start = time.monotonic()
    with open(out / "results.jsonl", "w") as f, \
            tempfile.TemporaryDirectory(prefix="itergraph-fuzz-") as tmp:
        for i in range(0, len(specs), batch):
            chunk = specs[i:i + batch]
            got = run_batch(chunk, Path(tmp) / f"batch{i // batch}", timeout)
            for s in chunk:
                res = got[s]
                res["verdict"] = verdict(res)
                counts[res["verdict"]] += 1
                results.append(res)
                f.write(json.dumps(res, default=str) + "\n")
            f.flush()
            took = max(time.monotonic() - start, 1e-3)
            shown = " ".join(f"{v}={counts[v]}" for v in ORDER if counts[v])
            print(f"[{len(results)}/{n}] {took:.0f}s ({len(results) / took:.1f}/s) {shown}",
                  file=log, flush=True)
    (out / "findings.json").write_text(json.dumps(distinct(results), indent=1, default=str))
    return results


def distinct(results: list[dict]) -> list[dict]:
    """The distinct findings: one per `verdicts.key`, with how many mutants hit it and the
    first of them (its spec reproduces it: ``python -m tests.fuzz --replay SPEC``)."""
    seen: dict[tuple, dict] = {}
    for res in results:
        for f in findings(res):
            k = key(f)
            if k not in seen:
                seen[k] = {"key": list(k), "count": 0, "first": res["name"],
                           "desc": res.get("desc", ""), **f}
            seen[k]["count"] += 1
    return sorted(seen.values(), key=lambda x: (ORDER.index(x["verdict"]), -x["count"]))


def summarize(results: list[dict]) -> str:
    """A table of verdict counts, then every distinct finding."""
    counts = Counter(r["verdict"] for r in results)
    lines = ["verdict     mutants", "---------   -------"]
    lines += [f"{v:<11} {counts[v]:>7}" for v in ORDER if counts[v]]
    lines.append(f"{'total':<11} {len(results):>7}")
    found = distinct(results)
    lines.append(f"\n{len(found)} distinct finding(s) "
                 f"({sum(counts[v] for v in FINDINGS)} mutant(s) with findings)")
    for f in found:
        lines.append(f"- {f['verdict']} {f['type']} at {f['frame'] or '?'} "
                     f"[{f['stage']}] x{f['count']}: {f['msg'][:200]!r}")
        lines.append(f"    first: {f['first']}  ({f['desc'][:150]})")
    return "\n".join(lines)
