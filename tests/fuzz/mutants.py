"""A mutant: a seed model, a mutation operator and an rng seed, from which the mutated files
and feeds are built deterministically; and the choice of mutants for a campaign.

A mutant is written ``SEED_ID|OPERATOR|RNG_SEED`` (`Mutant.spec`). Operators are those of
`mutate_onnx` (ONNX seeds), `mutate_ir` (OpenVINO IR seeds) and `mutate_feeds` (both), plus
``none`` (the seed as it is, a control), ``bytes`` (an ONNX file's bytes overwritten or cut)
and ``multi`` (two or three operators of the seed's format, one after another).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from . import (  # noqa: F401 - the *_more modules register their operators
    mutate_definitions,
    mutate_feeds,
    mutate_ir,
    mutate_ir_more,
    mutate_network,
    mutate_onnx,
    mutate_onnx_more,
    mutate_onnx_scale,
)
from .common import NotApplicable
from .seeds import Seed, seed, seeds

SPECIAL = ("none", "bytes", "multi")


@dataclass(frozen=True)
class Mutant:
    seed_id: str
    op: str
    rng_seed: int

    @property
    def spec(self) -> str:
        return f"{self.seed_id}|{self.op}|{self.rng_seed}"

    @classmethod
    def parse(cls, spec: str) -> Mutant:
        seed_id, op, n = spec.split("|")
        return cls(seed_id, op, int(n))


@dataclass
class Built:
    """A mutant's files and feeds; `description` says what each operator did."""

    path: Path
    feeds: dict
    description: str


_TABLES = {"onnx": mutate_onnx.OPS, "openvino": mutate_ir.OPS, "network": mutate_network.OPS}


def model_ops(fmt: str) -> list[str]:
    return sorted(_TABLES[fmt])


def _apply(op: str, fmt: str, target, feeds: dict, rng) -> str:
    if op in mutate_feeds.OPS:
        return mutate_feeds.OPS[op](feeds, rng)
    table = _TABLES[fmt]
    if op not in table:
        raise NotApplicable(f"operator {op} is not one of the {fmt} operators")
    return table[op](target, rng)


def build(m: Mutant, out_dir: Path) -> Built:
    """Write the mutant's model into `out_dir` (``m.onnx``, or ``m.xml`` and ``m.bin``) and
    return it with its feeds. `NotApplicable` when the operator finds nothing to mutate."""
    s: Seed = seed(m.seed_id)
    rng = np.random.default_rng(m.rng_seed)
    feeds = dict(s.feeds())
    out_dir.mkdir(parents=True, exist_ok=True)
    if s.format == "network":
        return _build_network(m, s, rng, feeds, out_dir)
    if s.format == "onnx":
        target = onnx.load(str(s.file), load_external_data=False)
    else:
        weights = s.weights.read_bytes() if s.weights else b""
        target = mutate_ir.IR(ET.parse(s.file).getroot(), weights)
    if m.op == "multi":
        ops = model_ops(s.format) + sorted(mutate_feeds.OPS)
        done = []
        for _ in range(int(rng.integers(2, 4))):
            op = ops[int(rng.integers(len(ops)))]
            try:
                done.append(f"{op}: {_apply(op, s.format, target, feeds, rng)}")
            except NotApplicable:
                pass
        if not done:
            raise NotApplicable("no operator applied")
        desc = "; ".join(done)
    elif m.op in ("none", "bytes"):
        desc = m.op
    else:
        desc = _apply(m.op, s.format, target, feeds, rng)
    if s.format == "onnx":
        data = mutate_onnx.finish(target.SerializeToString())
        if m.op == "bytes":
            data, desc = mutate_onnx.flip_bytes(data, rng)
        path = out_dir / "m.onnx"
        path.write_bytes(data)
    else:
        if m.op == "bytes":
            raise NotApplicable("bytes is an ONNX operator")
        path = out_dir / "m.xml"
        path.write_bytes(target.xml())
        if s.weights is not None:
            (out_dir / "m.bin").write_bytes(target.weights)
    return Built(path, feeds, desc)


def _build_network(m: Mutant, s: Seed, rng, feeds: dict, out_dir: Path) -> Built:
    """A network seed's script, mutated (``multi``: two or three operators), as ``m.netpkl``."""
    script = mutate_network.seed_script(s.id)
    if m.op == "bytes":
        raise NotApplicable("bytes is an ONNX operator")
    ops = [m.op] if m.op != "multi" else [
        o for o in rng.choice(model_ops("network") + sorted(mutate_feeds.OPS),
                              int(rng.integers(2, 4)))]
    done = []
    for op in ops if m.op != "none" else ():
        try:
            done.append(f"{op}: {_apply(op, 'network', script, feeds, rng)}")
        except NotApplicable:
            if m.op != "multi":
                raise
    if m.op == "multi" and not done:
        raise NotApplicable("no operator applied")
    path = out_dir / "m.netpkl"
    mutate_network.write_script(script, path)
    return Built(path, feeds, "; ".join(done) or m.op)


def campaign(n: int, rng_seed: int, seed_ids: list[str] | None = None,
             ops: list[str] | None = None) -> list[Mutant]:
    """`n` mutants drawn from `rng_seed`: a seed (a network script a tenth of the time), then
    an operator (a quarter of the time a
    feed operator, a few percent ``multi`` or ``bytes``, else one of the format's); with
    `ops`, an operator of those that applies to the seed's format."""
    pool = [s for s in seeds() if seed_ids is None or s.id in seed_ids]
    nets = [s for s in pool if s.format == "network"]
    files = [s for s in pool if s.format != "network"] or nets
    rng = np.random.default_rng(rng_seed)
    out = []
    for _ in range(n):
        # network scripts a tenth of the time (a handful of seeds among hundreds of files)
        group = nets if nets and rng.random() < 0.1 else files
        s = group[int(rng.integers(len(group)))]
        r = rng.random()
        if ops is not None:
            choice = sorted(o for o in ops if o in mutate_feeds.OPS or o in SPECIAL
                            or o in model_ops(s.format))
            if not choice:
                continue
        elif r < 0.25:
            choice = sorted(mutate_feeds.OPS)
        elif r < 0.30:
            choice = ["multi"] if s.format == "openvino" or r < 0.28 else ["bytes"]
        else:
            choice = model_ops(s.format)
        out.append(Mutant(s.id, choice[int(rng.integers(len(choice)))],
                          int(rng.integers(2**31))))
    return out
