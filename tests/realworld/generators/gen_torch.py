"""Real-world corpus: loops written in PyTorch, exported by torch.onnx and converted by OpenVINO.

Sources written (see ``corpus_writer.py`` and the manifests beside ``models/``):

- ``torch``: ONNX files from ``torch.onnx.export``.
  * TorchScript exporter (``dynamo=False``) on ``torch.jit.script`` modules, so Python loops
    stay ONNX ``Loop``s: ``for i in range(n)`` (n an input, a shape, a constant), ``while``
    loops on data-dependent conditions, ``break`` / ``continue``, loops over the rows of a
    tensor, list append + ``torch.stack`` / ``torch.cat`` (ONNX sequences), state grown with
    ``torch.cat``, nested loops, ``if`` inside loops, greedy and beam decoders (embedding,
    argmax, topk), cumulative ops, swaps, in-place writes (ScatterND), masked selects,
    ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` (layers, bidirectional, batch_first, initial states,
    packed sequences) and their cells stepped in a scripted loop. Each form at the oldest
    opset the exporter accepts for it (searched from 7 upwards), the newest it offers, and
    for some forms opsets in between.
  * dynamo exporter (``dynamo=True``) on ``torch._higher_order_ops`` ``while_loop``, ``scan``,
    ``cond`` (inside loops), ``map`` and on ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN``, at the
    exporter's default opset and the newest it offers.
- ``torch-ov``: OpenVINO IR (``ov.save_model(..., compress_to_fp16=False)``) written by
  ``ov.convert_model`` from the ONNX files above (OpenVINO's ONNX frontend) and from the
  scripted / eager torch modules directly (OpenVINO's PyTorch frontend, which turns
  scripted loops into Loop-5 and ``nn.LSTM`` into LSTMSequence).

Every entry stores its feeds and the torch module's own outputs (``oracle="framework"``);
``peer`` records ONNX Runtime and OpenVINO run on the written file, compared with those
outputs. Exports that fail, and exports in which no loop is left, are printed at the end.

Run by hand from the repository root (needs torch, not a test dependency)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_torch.py

Environment (see README.md here): torch 2.13 (CPU), onnx, onnxscript (dynamo exporter),
onnxruntime, openvino 2026.4.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import multiprocessing
import os
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import openvino as ov
import torch
from torch import Tensor, nn
from torch._higher_order_ops.map import map as hop_map
from torch._higher_order_ops.scan import scan
from torch._higher_order_ops.while_loop import while_loop

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import ROOT, Corpus  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")

TS_OLDEST = 7  # the search for each form's oldest opset starts here
TS_NEWEST_TRY = tuple(range(26, 17, -1))
DYNAMO_NEWEST_TRY = tuple(range(27, 19, -1))
LOOP_OPS = {"Loop", "Scan", "LSTM", "GRU", "RNN"}


# --------------------------------------------------------------------------------------------
# TorchScript modules: what users write in a scripted forward
# --------------------------------------------------------------------------------------------

class ForRangeInput(nn.Module):
    """``for _ in range(n)``, n an input: trip count from a tensor, condition always true."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        for _ in range(int(n)):
            x = x * 0.5 + 1.0
        return x


class ForRangeShape(nn.Module):
    """A hand-written RNN over ``range(x.size(0))`` with a dynamic time axis."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 6)
        self.rec = nn.Linear(6, 6, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.zeros(x.size(1), 6)
        for t in range(x.size(0)):
            h = torch.tanh(self.lin(x[t]) + self.rec(h))
        return h


class ForRangeConst(nn.Module):
    """A constant trip count large enough that TorchScript keeps (and unrolls by 8) the loop."""

    def forward(self, x: Tensor) -> Tensor:
        for i in range(100):
            x = x * 0.9 + float(i % 7) * 0.01
        return x


class WhileSum(nn.Module):
    """``while x.sum() < t``: data-dependent condition; returns the step count too."""

    def forward(self, x: Tensor, t: Tensor) -> tuple[Tensor, int]:
        steps = 0
        while bool(x.sum() < t):
            x = x * 1.5 + 0.1
            steps += 1
        return x, steps


class WhileCounterAnd(nn.Module):
    """``while i < n and x.abs().max() > eps``: counter plus early stop."""

    def forward(self, x: Tensor, n: Tensor, eps: Tensor) -> tuple[Tensor, int]:
        i = 0
        while i < int(n) and bool(x.abs().max() > eps):
            x = x * 0.5 - 0.01
            i += 1
        return x, i


class NewtonSqrt(nn.Module):
    """Newton iteration for sqrt until the update is small (while on a float tolerance)."""

    def forward(self, a: Tensor) -> tuple[Tensor, int]:
        y = torch.ones_like(a)
        delta = torch.ones_like(a)
        steps = 0
        while bool(delta.abs().max() > 1e-4):
            new = 0.5 * (y + a / y)
            delta = new - y
            y = new
            steps += 1
        return y, steps


class ForBreak(nn.Module):
    """Early stop: ``for`` with ``if ...: break`` on a data-dependent test."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 5)

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, int]:
        steps = 0
        for _ in range(int(n)):
            x = torch.tanh(self.lin(x)) * 2.0 + x
            steps += 1
            if bool(x.abs().sum() > 40.0):
                break
        return x, steps


class ForContinue(nn.Module):
    """``continue`` on the iteration number."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        for i in range(int(n)):
            if i % 3 == 0:
                continue
            x = x * 0.8 + float(i)
        return x


class ForOverRows(nn.Module):
    """``for row in x``: iterating a tensor along its first axis."""

    def forward(self, x: Tensor) -> Tensor:
        acc = torch.zeros(x.size(1))
        for row in x:
            acc = acc * 0.9 + row * row
        return acc


class ListStack(nn.Module):
    """List append in a loop, then ``torch.stack`` (SequenceInsert + ConcatFromSequence)."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        outs: list[Tensor] = []
        h = x
        for i in range(int(n)):
            h = torch.sin(h) + 0.1 * float(i)
            outs.append(h)
        return torch.stack(outs, 0)


class ListCat(nn.Module):
    """List append of pieces of growing size, then ``torch.cat``."""

    def forward(self, x: Tensor) -> Tensor:
        outs: list[Tensor] = []
        for i in range(x.size(0)):
            outs.append(x[: i + 1] * float(i + 1))
        return torch.cat(outs, 0)


class ManualRNNStack(nn.Module):
    """Hand-written Elman RNN returning the stacked states and the last state."""

    def __init__(self):
        super().__init__()
        self.wx = nn.Linear(3, 8)
        self.wh = nn.Linear(8, 8, bias=False)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        h = torch.zeros(x.size(1), 8)
        outs: list[Tensor] = []
        for t in range(x.size(0)):
            h = torch.tanh(self.wx(x[t]) + self.wh(h))
            outs.append(h)
        return torch.stack(outs), h


class GrowingCat(nn.Module):
    """State that grows: ``y = torch.cat([y, f(y[-1:])])`` each step."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        y = x
        for _ in range(int(n)):
            y = torch.cat([y, y[-1:] * 0.5 + 1.0], 0)
        return y


class NestedFor(nn.Module):
    """Two nested ``for`` loops with trip counts from inputs, the body reads both indices."""

    def forward(self, x: Tensor, n: Tensor, m: Tensor) -> Tensor:
        for i in range(int(n)):
            for j in range(int(m)):
                x = x * 0.9 + float(i * j) * 0.01
        return x


class NestedRowsInner(nn.Module):
    """Outer loop over rows, inner fixed-point loop with a trip count from an input."""

    def forward(self, x: Tensor, k: Tensor) -> Tensor:
        outs: list[Tensor] = []
        for row in x:
            h = row
            for _ in range(int(k)):
                h = torch.tanh(h + row)
            outs.append(h)
        return torch.stack(outs)


class NestedWhileInFor(nn.Module):
    """A ``while`` inside a ``for``: halve each row until its norm is below 1."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        outs: list[Tensor] = []
        counts: list[int] = []
        for i in range(x.size(0)):
            r = x[i]
            c = 0
            while bool((r * r).sum() > 1.0):
                r = r * 0.5
                c += 1
            outs.append(r)
            counts.append(c)
        return torch.stack(outs), torch.tensor(counts)


class IfInLoop(nn.Module):
    """``if``/``else`` on data inside the loop body (an If inside the Loop)."""

    def forward(self, x: Tensor) -> Tensor:
        h = torch.zeros(x.size(1))
        for t in range(x.size(0)):
            if bool(x[t].sum() > 0):
                h = h + x[t]
            else:
                h = h * 0.5 - x[t]
        return h


class IfIterParity(nn.Module):
    """``if i % 2 == 0`` on the iteration number, different ops in each branch."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        for i in range(int(n)):
            if i % 2 == 0:
                x = torch.sigmoid(x) * 2.0
            else:
                x = x.flip(0) - 0.5
        return x


class GreedyDecoder(nn.Module):
    """Greedy decoder: embedding, LSTMCell, Linear, argmax, stop when every row hits EOS."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.cell = nn.LSTMCell(8, 8)
        self.out = nn.Linear(8, 10)

    def forward(self, h: Tensor, c: Tensor, max_len: Tensor) -> tuple[Tensor, Tensor]:
        tok = torch.zeros(h.size(0), dtype=torch.long)
        toks: list[Tensor] = []
        for _ in range(int(max_len)):
            h, c = self.cell(self.emb(tok), (h, c))
            tok = self.out(h).argmax(-1)
            toks.append(tok)
            if bool((tok == 1).all()):
                break
        return torch.stack(toks, 1), h


class GreedyGrowing(nn.Module):
    """Greedy decoder whose token history is a tensor grown with ``torch.cat``."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.wx = nn.Linear(8, 8)
        self.wh = nn.Linear(8, 8)
        self.out = nn.Linear(8, 10)

    def forward(self, h: Tensor, max_len: Tensor) -> Tensor:
        toks = torch.zeros(h.size(0), 1, dtype=torch.long)
        for _ in range(int(max_len)):
            h = torch.tanh(self.wx(self.emb(toks[:, -1])) + self.wh(h))
            nxt = torch.argmax(self.out(h), dim=1, keepdim=True)
            toks = torch.cat([toks, nxt], 1)
        return toks


class BeamSearch(nn.Module):
    """A beam search of width 3: log_softmax, flatten, topk, reorder beams by index."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(7, 8)
        self.wh = nn.Linear(8, 8)
        self.out = nn.Linear(8, 7)

    def forward(self, h0: Tensor, steps: Tensor) -> tuple[Tensor, Tensor]:
        k = 3
        vocab = 7
        h = h0.unsqueeze(0).expand(k, 8)
        scores = torch.tensor([0.0, -1e4, -1e4])
        seqs = torch.zeros(k, 1, dtype=torch.long)
        for _ in range(int(steps)):
            logp = torch.log_softmax(self.out(h), -1)
            cand = (scores.unsqueeze(1) + logp).reshape(-1)
            top, idx = cand.topk(k)
            beam = torch.div(idx, vocab, rounding_mode="floor")
            tok = idx % vocab
            seqs = torch.cat([seqs[beam], tok.unsqueeze(1)], 1)
            h = torch.tanh(self.emb(tok) + self.wh(h[beam]))
            scores = top
        return seqs, scores


class CumsumInLoop(nn.Module):
    """``torch.cumsum`` inside the loop body."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        for _ in range(int(n)):
            x = torch.cumsum(x, 1) * 0.25
        return x


class Swap(nn.Module):
    """``a, b = a + b, a``: carried values that swap."""

    def forward(self, a: Tensor, b: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        for _ in range(int(n)):
            a, b = a + b, a
        return a, b


class ScatterWrite(nn.Module):
    """In-place write into a preallocated tensor, ``out[t] = h`` (ScatterND in the body)."""

    def forward(self, x: Tensor) -> Tensor:
        out = torch.zeros(x.size(0), x.size(1))
        h = torch.zeros(x.size(1))
        for t in range(x.size(0)):
            h = torch.tanh(x[t] + h * 0.5)
            out[t] = h
        return out


class ReverseRange(nn.Module):
    """``for t in range(T - 1, -1, -1)``: a backwards pass."""

    def forward(self, x: Tensor) -> Tensor:
        h = torch.zeros(x.size(1), x.size(2))
        outs: list[Tensor] = []
        for t in range(x.size(0) - 1, -1, -1):
            h = torch.tanh(x[t] + h)
            outs.append(h)
        return torch.stack(outs)


class MaskedSelectLoop(nn.Module):
    """Boolean-mask indexing ``r[r > 0]`` in the body (a dynamic-size value per step)."""

    def forward(self, x: Tensor) -> Tensor:
        acc = torch.zeros(1)
        for i in range(x.size(0)):
            r = x[i]
            acc = acc * 0.5 + r[r > 0].sum()
        return acc


class LSTMCellLoop(nn.Module):
    """``nn.LSTMCell`` stepped over time, outputs stacked."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(3, 6)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        h = torch.zeros(x.size(1), 6)
        c = torch.zeros(x.size(1), 6)
        outs: list[Tensor] = []
        for t in range(x.size(0)):
            h, c = self.cell(x[t], (h, c))
            outs.append(h)
        return torch.stack(outs), h, c


class GRUCellLoop(nn.Module):
    """``nn.GRUCell`` stepped over time."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, 6)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.zeros(x.size(1), 6)
        for t in range(x.size(0)):
            h = self.cell(x[t], h)
        return h


class RNNCellLoop(nn.Module):
    """``nn.RNNCell`` stepped over time."""

    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(3, 6)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.zeros(x.size(1), 6)
        for t in range(x.size(0)):
            h = self.cell(x[t], h)
        return h


class ManualGRULoop(nn.Module):
    """A GRU cell written out by hand (what users write when GRUCell does not export)."""

    def __init__(self):
        super().__init__()
        self.wx = nn.Linear(3, 18)
        self.wh = nn.Linear(6, 18)

    def forward(self, x: Tensor, h: Tensor) -> Tensor:
        for t in range(x.size(0)):
            gx = self.wx(x[t]).chunk(3, 1)
            gh = self.wh(h).chunk(3, 1)
            r = torch.sigmoid(gx[0] + gh[0])
            z = torch.sigmoid(gx[1] + gh[1])
            n = torch.tanh(gx[2] + r * gh[2])
            h = (1 - z) * n + z * h
        return h


class RecurrentNet(nn.Module):
    """``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` returning outputs and final states."""

    def __init__(self, kind: str, inputs: int = 3, hidden: int = 5, with_state: bool = False,
                 **kw):
        super().__init__()
        self.kind = kind
        self.rnn = getattr(nn, kind)(inputs, hidden, **kw)
        self.with_state = with_state

    def forward(self, x, *state):
        if self.kind == "LSTM":
            y, (h, c) = self.rnn(x, (state[0], state[1]) if state else None)
            return y, h, c
        y, h = self.rnn(x, state[0] if state else None)
        return y, h


class ScriptedLSTM(nn.Module):
    """A scripted module around ``nn.LSTM`` (TorchScript needs a typed forward)."""

    def __init__(self, **kw):
        super().__init__()
        self.rnn = nn.LSTM(3, 5, **kw)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        y, (h, c) = self.rnn(x)
        return y, h, c


class ScriptedLSTMState(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.rnn = nn.LSTM(3, 5, **kw)

    def forward(self, x: Tensor, h0: Tensor, c0: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        y, (h, c) = self.rnn(x, (h0, c0))
        return y, h, c


class ScriptedGRU(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.rnn = nn.GRU(3, 5, **kw)

    def forward(self, x: Tensor, h0: Tensor) -> tuple[Tensor, Tensor]:
        y, h = self.rnn(x, h0)
        return y, h


class ScriptedRNN(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.rnn = nn.RNN(3, 5, **kw)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        y, h = self.rnn(x)
        return y, h


class PackedLSTM(nn.Module):
    """``pack_padded_sequence`` -> LSTM -> ``pad_packed_sequence`` with per-row lengths."""

    def __init__(self, kind: str = "LSTM", bidirectional: bool = False):
        super().__init__()
        self.kind = kind
        self.rnn = getattr(nn, kind)(3, 5, bidirectional=bidirectional)

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=True)
        y, state = self.rnn(packed)
        y, _ = nn.utils.rnn.pad_packed_sequence(y, total_length=x.size(0))
        h = state[0] if self.kind == "LSTM" else state
        return y, h


# --------------------------------------------------------------------------------------------
# dynamo modules: torch._higher_order_ops loops
# --------------------------------------------------------------------------------------------

class WhileLoopCounter(nn.Module):
    """``while_loop(i < n)`` with n an input."""

    def forward(self, x, n):
        def cond(i, y):
            return i < n

        def body(i, y):
            return i + 1, y * 0.5 + 1.0

        i, y = while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))
        return y, i


class WhileLoopSum(nn.Module):
    """``while_loop(y.sum() < t)``: a data-dependent stop."""

    def forward(self, x, t):
        def cond(y):
            return y.sum() < t

        def body(y):
            return (y * 1.5 + 0.1,)

        (y,) = while_loop(cond, body, (x,))
        return y


class WhileLoopCond(nn.Module):
    """``torch.cond`` inside a ``while_loop`` body."""

    def forward(self, x, n):
        def cond(i, y):
            return i < n

        def body(i, y):
            z = torch.cond(y.sum() > 0, lambda v: v * 0.5 - 1.0, lambda v: v + 2.0, (y,))
            return i + 1, z

        i, y = while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))
        return y


class ScanCumsum(nn.Module):
    """``scan``: running sum as carry, every partial sum as a scan output."""

    def forward(self, x):
        def step(c, xi):
            c = c + xi
            return c, c * 2.0

        c, ys = scan(step, torch.zeros(x.shape[1:]), x)
        return c, ys


class ScanRNN(nn.Module):
    """``scan`` of an Elman cell whose weights the body captures."""

    def __init__(self):
        super().__init__()
        self.wx = nn.Linear(3, 6)
        self.wh = nn.Linear(6, 6, bias=False)

    def forward(self, x, h0):
        def step(h, xt):
            h = torch.tanh(self.wx(xt) + self.wh(h))
            return h, h.clone()

        h, ys = scan(step, h0, x)
        return ys, h


class ScanCond(nn.Module):
    """``torch.cond`` inside a ``scan`` body."""

    def forward(self, x):
        def step(c, xi):
            c = torch.cond(xi.sum() > 0, lambda a, b: a + b, lambda a, b: a * 0.5 - b, (c, xi))
            return c, c.clone()

        c, ys = scan(step, torch.zeros(x.shape[1:]), x)
        return c, ys


class ScanReverse(nn.Module):
    """``scan(..., reverse=True)``: a backwards pass."""

    def forward(self, x):
        def step(c, xi):
            c = torch.tanh(c + xi)
            return c, c.clone()

        c, ys = scan(step, torch.zeros(x.shape[1:]), x, reverse=True)
        return c, ys


class ScanMultiCarry(nn.Module):
    """``scan`` with two carries that swap (``a, b = a + b, a``) and two scanned inputs."""

    def forward(self, x, w):
        def step(carry, xs):
            a, b = carry
            xi, wi = xs
            a, b = a + b * wi, a + xi
            return (a, b), a.clone()

        (a, b), ys = scan(step, (torch.ones(x.shape[1:]), torch.zeros(x.shape[1:])), (x, w))
        return a, b, ys


class NestedWhileScan(nn.Module):
    """A ``scan`` inside a ``while_loop`` body."""

    def forward(self, x, n):
        def cond(i, y):
            return i < n

        def body(i, y):
            def step(c, yi):
                c = c * 0.5 + yi
                return c, c.clone()

            _, ys = scan(step, torch.zeros(y.shape[1:]), y)
            return i + 1, ys

        i, y = while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))
        return y


class MapRows(nn.Module):
    """``map`` over the rows of a tensor."""

    def forward(self, x, w):
        return hop_map(lambda r, w: torch.tanh(r @ w), x, w)


class WhileGreedy(nn.Module):
    """Greedy decoding in a ``while_loop``: embedding, GRU-like cell, argmax token carried."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.wx = nn.Linear(8, 8)
        self.wh = nn.Linear(8, 8)
        self.out = nn.Linear(8, 10)

    def forward(self, h, n):
        def cond(i, tok, h, acc):
            return i < n

        def body(i, tok, h, acc):
            h = torch.tanh(self.wx(self.emb(tok)) + self.wh(h))
            logits = self.out(h)
            tok = logits.argmax(-1)
            return i + 1, tok, h, acc + logits.max(-1).values

        zero = torch.zeros((), dtype=torch.int64)
        tok0 = torch.zeros(h.shape[0], dtype=torch.int64)
        i, tok, h, acc = while_loop(cond, body, (zero, tok0, h, torch.zeros(h.shape[0])))
        return tok, h, acc


# --------------------------------------------------------------------------------------------
# case tables
# --------------------------------------------------------------------------------------------

@dataclass
class Case:
    """One model form: how to build it, its feeds, tags, and what to export it with."""

    name: str
    make: Callable[[], nn.Module]
    feeds: Callable[[np.random.Generator], dict]
    tags: tuple
    description: str
    outputs: list
    dynamic: dict | None = None
    script: bool = True
    mid_opsets: tuple = ()
    ov_torch: bool = False
    ov_trace: bool = False
    ov_onnx: bool = True
    rtol: float = 1e-4
    atol: float = 1e-5
    notes: list = field(default_factory=list)


def f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def i64(v):
    return np.array(v, dtype=np.int64)


T_AXES = {0: "T", 1: "B"}

TS_CASES = [
    Case("for_range_input", ForRangeInput,
         lambda r: {"x": f32(r, 2, 3), "n": i64(6)}, ("loop",),
         "for _ in range(n): x = x * 0.5 + 1 with n an int64 input; the body ignores the "
         "iteration number and the loop condition is an outer constant",
         ["y"], {"x": {0: "B"}}, mid_opsets=(11, 13, 17), ov_torch=True),
    Case("for_range_shape", ForRangeShape,
         lambda r: {"x": f32(r, 5, 2, 4)}, ("loop", "rnn"),
         "hand-written Elman RNN over range(x.size(0)); time and batch axes dynamic",
         ["h"], {"x": T_AXES}, mid_opsets=(13,), ov_torch=True),
    Case("for_range_const", ForRangeConst,
         lambda r: {"x": f32(r, 2, 3)}, ("loop",),
         "for i in range(100) with a constant trip count: TorchScript unrolls the body 8 "
         "times inside the loop and runs the remainder after it",
         ["y"]),
    Case("while_sum", WhileSum,
         lambda r: {"x": f32(r, 2, 3, lo=0.1, hi=1.0), "t": np.array(50.0, np.float32)},
         ("while",), "while x.sum() < t: x = x * 1.5 + 0.1; also returns the step count "
         "(a Python int in torch, int64 in the file)",
         ["y", "steps"], {"x": {0: "B"}}, mid_opsets=(13,), ov_torch=True),
    Case("while_counter_and", WhileCounterAnd,
         lambda r: {"x": f32(r, 3, 4, lo=-4, hi=4), "n": i64(8),
                    "eps": np.array(0.2, np.float32)},
         ("while", "break"), "while i < n and x.abs().max() > eps: early stop on either test",
         ["y", "steps"], ov_torch=True),
    Case("newton_sqrt", NewtonSqrt,
         lambda r: {"a": f32(r, 2, 4, lo=0.5, hi=9.0)}, ("while",),
         "Newton iteration for sqrt until the update is below 1e-4",
         ["y", "steps"], {"a": {0: "B"}}),
    Case("for_break", ForBreak,
         lambda r: {"x": f32(r, 2, 5), "n": i64(8)}, ("loop", "break"),
         "for with an early break when x.abs().sum() > 40", ["y", "steps"],
         mid_opsets=(13,), ov_torch=True),
    Case("for_continue", ForContinue,
         lambda r: {"x": f32(r, 2, 3), "n": i64(7)}, ("loop", "cond"),
         "for with continue when i % 3 == 0", ["y"], ov_torch=True),
    Case("for_over_rows", ForOverRows,
         lambda r: {"x": f32(r, 6, 4)}, ("loop",),
         "for row in x (iterating a tensor along axis 0); time axis dynamic",
         ["acc"], {"x": {0: "T"}}, ov_torch=True),
    Case("list_append_stack", ListStack,
         lambda r: {"x": f32(r, 2, 3), "n": i64(5)}, ("loop", "sequence"),
         "outs.append(h) in a loop then torch.stack(outs)", ["ys"],
         mid_opsets=(13, 17), ov_torch=True),
    Case("list_append_cat", ListCat,
         lambda r: {"x": f32(r, 4, 3)}, ("loop", "sequence", "growing"),
         "appends x[:i+1] * (i+1), pieces of growing size, then torch.cat(outs)",
         ["ys"], {"x": {0: "T"}}),
    Case("manual_rnn_stack", ManualRNNStack,
         lambda r: {"x": f32(r, 6, 2, 3)}, ("loop", "sequence", "rnn"),
         "hand-written Elman RNN, states appended to a list and stacked",
         ["ys", "h"], {"x": T_AXES}, ov_torch=True),
    Case("growing_cat", GrowingCat,
         lambda r: {"x": f32(r, 2, 3), "n": i64(5)}, ("loop", "growing"),
         "y = torch.cat([y, y[-1:] * 0.5 + 1]) each step: a carried value whose shape grows",
         ["y"], ov_torch=True),
    Case("nested_for", NestedFor,
         lambda r: {"x": f32(r, 2, 3), "n": i64(3), "m": i64(4)}, ("loop", "nested"),
         "two nested for loops, trip counts from inputs, the body reads both indices",
         ["y"], mid_opsets=(13,), ov_torch=True),
    Case("nested_rows_inner", NestedRowsInner,
         lambda r: {"x": f32(r, 4, 3), "k": i64(3)}, ("loop", "nested", "sequence"),
         "outer loop over rows with a list append, inner fixed-point loop", ["ys"],
         {"x": {0: "T"}}),
    Case("nested_while_in_for", NestedWhileInFor,
         lambda r: {"x": f32(r, 4, 3, lo=-3, hi=3)}, ("loop", "while", "nested", "sequence"),
         "a while loop (halve until norm <= 1) inside a for over rows; per-row counts "
         "collected in an int list", ["ys", "counts"], {"x": {0: "T"}}, ov_torch=True),
    Case("if_in_loop", IfInLoop,
         lambda r: {"x": f32(r, 6, 3)}, ("loop", "cond"),
         "if x[t].sum() > 0 ... else ... inside the loop body", ["h"], {"x": {0: "T"}},
         mid_opsets=(13,), ov_torch=True),
    Case("if_iter_parity", IfIterParity,
         lambda r: {"x": f32(r, 3, 2), "n": i64(5)}, ("loop", "cond"),
         "if i % 2 == 0 on the iteration number, sigmoid in one branch, flip in the other",
         ["y"]),
    Case("greedy_decoder", GreedyDecoder,
         lambda r: {"h": f32(r, 2, 8), "c": f32(r, 2, 8), "max_len": i64(6)},
         ("loop", "decoder", "lstm", "break", "sequence"),
         "greedy decoder: embedding, LSTMCell, Linear, argmax, break when all rows emit "
         "token 1; tokens stacked from a list", ["tokens", "h_out"],
         {"h": {0: "B"}, "c": {0: "B"}},
         mid_opsets=(13, 17), ov_torch=True),
    Case("greedy_growing", GreedyGrowing,
         lambda r: {"h": f32(r, 3, 8), "max_len": i64(6)}, ("loop", "decoder", "growing"),
         "greedy decoder whose token history is grown with torch.cat and read back with "
         "toks[:, -1]", ["tokens"], {"h": {0: "B"}}, ov_torch=True),
    Case("beam_search", BeamSearch,
         lambda r: {"h0": f32(r, 8), "steps": i64(4)}, ("loop", "decoder", "beam", "growing"),
         "beam search of width 3: log_softmax, topk over beams x vocab, beams reordered by "
         "index, sequences grown with torch.cat", ["seqs", "scores"],
         mid_opsets=(13,), ov_torch=True),
    Case("cumsum_in_loop", CumsumInLoop,
         lambda r: {"x": f32(r, 2, 5), "n": i64(3)}, ("loop",),
         "torch.cumsum inside the loop body", ["y"], ov_torch=True),
    Case("swap", Swap,
         lambda r: {"a": np.ones(2, np.float32), "b": np.zeros(2, np.float32), "n": i64(6)},
         ("loop", "state"), "a, b = a + b, a (carried values that swap; 13 and 8 after 6 "
         "steps from 1, 0)", ["a_out", "b_out"], ov_torch=True),
    Case("scatter_write", ScatterWrite,
         lambda r: {"x": f32(r, 5, 3)}, ("loop", "state"),
         "out[t] = h into a preallocated tensor (index_put, ScatterND in the body)",
         ["out"], {"x": {0: "T"}}, ov_torch=True),
    Case("reverse_range", ReverseRange,
         lambda r: {"x": f32(r, 5, 2, 3)}, ("loop", "reverse", "sequence"),
         "for t in range(T - 1, -1, -1): a backwards pass, states stacked",
         ["ys"], {"x": T_AXES}, ov_torch=True),
    Case("masked_select_loop", MaskedSelectLoop,
         lambda r: {"x": f32(r, 5, 4)}, ("loop",),
         "r[r > 0].sum() in the body: a boolean-mask select of dynamic size each step",
         ["acc"], {"x": {0: "T"}}),
    Case("lstm_cell_loop", LSTMCellLoop,
         lambda r: {"x": f32(r, 5, 2, 3)}, ("loop", "lstm", "sequence"),
         "nn.LSTMCell stepped in a scripted loop, outputs stacked", ["ys", "h", "c"],
         {"x": T_AXES}, mid_opsets=(13,), ov_torch=True),
    Case("gru_cell_loop", GRUCellLoop,
         lambda r: {"x": f32(r, 5, 2, 3)}, ("loop", "gru"),
         "nn.GRUCell stepped in a scripted loop", ["h"], {"x": T_AXES}, ov_torch=True),
    Case("rnn_cell_loop", RNNCellLoop,
         lambda r: {"x": f32(r, 5, 2, 3)}, ("loop", "rnn"),
         "nn.RNNCell stepped in a scripted loop", ["h"], {"x": T_AXES}, ov_torch=True),
    Case("manual_gru_loop", ManualGRULoop,
         lambda r: {"x": f32(r, 5, 2, 3), "h": f32(r, 2, 6)}, ("loop", "gru", "state"),
         "a GRU cell written out with Linear, chunk, sigmoid, tanh, stepped over time",
         ["h_out"], {"x": T_AXES, "h": {0: "B"}}, ov_torch=True),
    Case("lstm", lambda: ScriptedLSTM(),
         lambda r: {"x": f32(r, 6, 2, 3)}, ("lstm",),
         "scripted nn.LSTM(3, 5), one layer, sequence first", ["y", "h", "c"], {"x": T_AXES},
         mid_opsets=(13,)),
    Case("lstm_2layer_bidirectional", lambda: ScriptedLSTM(num_layers=2, bidirectional=True),
         lambda r: {"x": f32(r, 6, 2, 3)}, ("lstm", "stacked", "bidirectional"),
         "scripted nn.LSTM, two layers, bidirectional", ["y", "h", "c"], {"x": T_AXES},
         ov_torch=True, ov_trace=True),
    Case("lstm_batch_first_state",
         lambda: ScriptedLSTMState(batch_first=True),
         lambda r: {"x": f32(r, 2, 6, 3), "h0": f32(r, 1, 2, 5), "c0": f32(r, 1, 2, 5)},
         ("lstm", "state"), "scripted nn.LSTM, batch_first, initial (h0, c0) as inputs",
         ["y", "h", "c"], {"x": {0: "B", 1: "T"}, "h0": {1: "B"}, "c0": {1: "B"}},
         ov_torch=True, ov_trace=True),
    Case("gru_bidirectional_state", lambda: ScriptedGRU(bidirectional=True),
         lambda r: {"x": f32(r, 6, 2, 3), "h0": f32(r, 2, 2, 5)},
         ("gru", "bidirectional", "state"), "scripted nn.GRU, bidirectional, h0 an input",
         ["y", "h"], {"x": T_AXES, "h0": {1: "B"}}, mid_opsets=(13,), ov_torch=True,
         ov_trace=True),
    Case("gru_2layer_batch_first", lambda: ScriptedGRU(num_layers=2, batch_first=True),
         lambda r: {"x": f32(r, 3, 5, 3), "h0": f32(r, 2, 3, 5)}, ("gru", "stacked", "state"),
         "scripted nn.GRU, two layers, batch_first", ["y", "h"],
         {"x": {0: "B", 1: "T"}, "h0": {1: "B"}}),
    Case("rnn_tanh", lambda: ScriptedRNN(),
         lambda r: {"x": f32(r, 6, 2, 3)}, ("rnn",), "scripted nn.RNN (tanh)", ["y", "h"],
         {"x": T_AXES}, ov_torch=True, ov_trace=True),
    Case("rnn_relu_2layer_bidirectional",
         lambda: ScriptedRNN(num_layers=2, bidirectional=True, nonlinearity="relu"),
         lambda r: {"x": f32(r, 6, 2, 3)}, ("rnn", "stacked", "bidirectional"),
         "scripted nn.RNN, relu, two layers, bidirectional", ["y", "h"], {"x": T_AXES}),
    Case("lstm_packed", lambda: PackedLSTM("LSTM"),
         lambda r: {"x": f32(r, 6, 3, 3), "lengths": i64([6, 4, 2])},
         ("lstm", "packed", "masking"),
         "pack_padded_sequence -> nn.LSTM -> pad_packed_sequence (traced: torch.jit.script "
         "cannot script the packed path's isinstance checks for export)",
         ["y", "h"], {"x": {0: "T", 1: "B"}, "lengths": {0: "B"}}, script=False,
         mid_opsets=(13,), ov_torch=True),
    Case("gru_packed_bidirectional", lambda: PackedLSTM("GRU", bidirectional=True),
         lambda r: {"x": f32(r, 6, 3, 3), "lengths": i64([6, 5, 3])},
         ("gru", "packed", "masking", "bidirectional"),
         "pack_padded_sequence -> bidirectional nn.GRU -> pad_packed_sequence (traced)",
         ["y", "h"], {"x": {0: "T", 1: "B"}, "lengths": {0: "B"}}, script=False,
         ov_torch=True),
]

DYNAMO_CASES = [
    Case("while_loop_counter", WhileLoopCounter,
         lambda r: {"x": f32(r, 2, 3), "n": i64(5)}, ("while",),
         "torch._higher_order_ops.while_loop(i < n) with n an input", ["y", "i"],
         ov_torch=True),
    Case("while_loop_sum", WhileLoopSum,
         lambda r: {"x": f32(r, 2, 3, lo=0.1, hi=1.0), "t": np.array(50.0, np.float32)},
         ("while",), "while_loop(y.sum() < t): data-dependent stop", ["y"], ov_torch=True),
    Case("while_loop_cond", WhileLoopCond,
         lambda r: {"x": f32(r, 2, 3), "n": i64(5)}, ("while", "cond"),
         "torch.cond inside a while_loop body", ["y"], ov_torch=True),
    Case("scan_cumsum", ScanCumsum,
         lambda r: {"x": f32(r, 5, 3)}, ("scan",),
         "torch._higher_order_ops.scan: running sum carried, partial sums scanned out",
         ["c", "ys"], ov_torch=True),
    Case("scan_rnn", ScanRNN,
         lambda r: {"x": f32(r, 5, 2, 3), "h0": f32(r, 2, 6)}, ("scan", "rnn", "state"),
         "scan of an Elman cell whose Linear weights the body captures", ["ys", "h"],
         ov_torch=True),
    Case("scan_cond", ScanCond,
         lambda r: {"x": f32(r, 6, 3)}, ("scan", "cond"), "torch.cond inside a scan body",
         ["c", "ys"]),
    Case("scan_reverse", ScanReverse,
         lambda r: {"x": f32(r, 5, 3)}, ("scan", "reverse"), "scan(..., reverse=True)",
         ["c", "ys"]),
    Case("scan_multi_carry", ScanMultiCarry,
         lambda r: {"x": f32(r, 4, 3), "w": f32(r, 4, 3)}, ("scan", "state"),
         "scan with two carries updated together (a, b = a + b * w, a + x) and two scanned "
         "inputs", ["a", "b", "ys"]),
    Case("nested_while_scan", NestedWhileScan,
         lambda r: {"x": f32(r, 4, 3), "n": i64(3)}, ("while", "scan", "nested"),
         "a scan inside a while_loop body", ["y"]),
    Case("map_rows", MapRows,
         lambda r: {"x": f32(r, 4, 3), "w": f32(r, 3, 2)}, ("map_fn",),
         "torch._higher_order_ops.map over the rows of x", ["y"]),
    Case("while_greedy_decoder", WhileGreedy,
         lambda r: {"h": f32(r, 2, 8), "n": i64(5)}, ("while", "decoder", "state"),
         "greedy decoding in a while_loop: embedding, tanh cell, argmax token carried",
         ["tok", "h_out", "score"], ov_torch=True),
    Case("lstm_2layer_bidirectional",
         lambda: RecurrentNet("LSTM", num_layers=2, bidirectional=True),
         lambda r: {"x": f32(r, 6, 2, 3)}, ("lstm", "stacked", "bidirectional"),
         "nn.LSTM, two layers, bidirectional", ["y", "h", "c"], ov_torch=True, ov_trace=True),
    Case("lstm_batch_first_state",
         lambda: RecurrentNet("LSTM", batch_first=True),
         lambda r: {"x": f32(r, 2, 6, 3), "h0": f32(r, 1, 2, 5), "c0": f32(r, 1, 2, 5)},
         ("lstm", "state"), "nn.LSTM, batch_first, initial (h0, c0) as inputs",
         ["y", "h", "c"]),
    Case("gru_bidirectional", lambda: RecurrentNet("GRU", bidirectional=True),
         lambda r: {"x": f32(r, 6, 2, 3)}, ("gru", "bidirectional"),
         "nn.GRU, bidirectional", ["y", "h"], ov_torch=True, ov_trace=True),
    Case("rnn_2layer_batch_first",
         lambda: RecurrentNet("RNN", num_layers=2, batch_first=True, nonlinearity="relu"),
         lambda r: {"x": f32(r, 2, 6, 3)}, ("rnn", "stacked"),
         "nn.RNN, relu, two layers, batch_first", ["y", "h"]),
    Case("lstm_packed", lambda: PackedLSTM("LSTM"),
         lambda r: {"x": f32(r, 6, 3, 3), "lengths": i64([6, 4, 2])},
         ("lstm", "packed", "masking"),
         "pack_padded_sequence -> nn.LSTM -> pad_packed_sequence", ["y", "h"]),
]


# --------------------------------------------------------------------------------------------
# running the peers (ONNX Runtime, OpenVINO) in a child process, so a crash is a result
# --------------------------------------------------------------------------------------------

def first_line(exc: BaseException | str) -> str:
    """The first line of an error, plus the line that names the culprit where the first
    line is generic (OpenVINO's conversion report, the dynamo exporter's step banners)."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    name = type(exc).__name__ if isinstance(exc, BaseException) else ""
    line = lines[0] if lines else ""
    if re.fullmatch(r"Exception from \S+:\d+:", line) and len(lines) > 1:
        line = " ".join(lines[1:3])  # OpenVINO: the place first, the message after it
    at = next((i for i, ln in enumerate(lines) if ln.startswith("-- ")), None)
    if "unconverted_ops_report" in line and at is not None:
        detail = lines[at]
        if detail.endswith("with a message:") and at + 1 < len(lines):
            detail += " " + lines[at + 1]
        line = "Model wasn't fully converted " + detail
    cause = getattr(exc, "__cause__", None)
    if isinstance(exc, BaseException) and cause is not None and (
            "step" in line or "pass" in line):
        line = line.split(".")[0] + "; caused by " + first_line(cause)
    return (f"{name}: {line}" if name else line)[:300]


def compare(got: list, expected: list, rtol: float, atol: float) -> str:
    if len(got) != len(expected):
        return f"mismatch: {len(got)} outputs, expected {len(expected)}"
    worst = 0.0
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        if g.shape != e.shape:
            return f"mismatch: output {i} shape {list(g.shape)}, expected {list(e.shape)}"
        if g.size == 0:
            continue
        err = float(np.max(np.abs(g.astype(np.float64) - e.astype(np.float64))))
        bound = atol + rtol * np.abs(e.astype(np.float64))
        if not np.all(np.abs(g.astype(np.float64) - e.astype(np.float64)) <= bound):
            return f"mismatch: output {i} max err {err:.3g}"
        worst = max(worst, err)
    return "ok"


def peer_worker(path: str, feeds: dict, expected: list, rtol: float, atol: float) -> dict:
    result = {}
    if path.endswith(".onnx"):
        try:
            sess = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
            names = [i.name for i in sess.get_inputs()]
            got = sess.run(None, {k: v for k, v in feeds.items() if k in names})
            result["onnxruntime"] = compare(got, expected, rtol, atol)
        except Exception as exc:  # noqa: BLE001 - any failure of the peer is a result
            result["onnxruntime"] = "error: " + first_line(exc)
    try:
        compiled = ov.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        req = compiled.create_infer_request()
        res = req.infer({port_name(p, feeds): feeds[port_name(p, feeds)]
                         for p in compiled.inputs})
        got = [res[o] for o in compiled.outputs]
        result["openvino"] = compare(got, expected, rtol, atol)
    except Exception as exc:  # noqa: BLE001
        result["openvino"] = "error: " + first_line(exc)
    return result


def port_name(port, feeds: dict) -> str:
    """The name of an OpenVINO port that ``feeds`` uses (a port can carry several names)."""
    names = port.get_names()
    return next((n for n in feeds if n in names), port.get_any_name())


class Peers:
    """A one-process pool; a peer that kills its process is reported, then the pool restarts."""

    def __init__(self):
        self.pool = None

    def check(self, path: Path, feeds: dict, expected: list, rtol: float, atol: float) -> dict:
        if self.pool is None:
            ctx = multiprocessing.get_context("spawn")
            self.pool = concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx)
        fut = self.pool.submit(peer_worker, str(path), feeds, expected, rtol, atol)
        try:
            # messages name the file; keep the manifest free of this checkout's path
            return {k: v.replace(f"{ROOT}/", "") for k, v in fut.result(timeout=300).items()}
        except Exception as exc:  # noqa: BLE001 - a crash of the child
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None
            # no run in this corpus crashes its peer; were one to, both peers are marked
            peers = ("onnxruntime", "openvino") if str(path).endswith(".onnx") else ("openvino",)
            return {peer: f"error: process died ({first_line(exc)})" for peer in peers}

    def close(self):
        if self.pool is not None:
            self.pool.shutdown()


# --------------------------------------------------------------------------------------------
# export helpers
# --------------------------------------------------------------------------------------------

def flatten(value) -> list:
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in flatten(v)]
    if isinstance(value, Tensor):
        return [value.detach().numpy()]
    if isinstance(value, bool):
        return [np.array(value)]
    if isinstance(value, int):
        return [np.array(value, dtype=np.int64)]
    if isinstance(value, float):
        return [np.array(value, dtype=np.float32)]
    raise TypeError(type(value))


def loop_ops(graph: onnx.GraphProto) -> set:
    found = set()
    for node in graph.node:
        if node.op_type in LOOP_OPS:
            found.add(node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                found |= loop_ops(attr.g)
            for g in attr.graphs:
                found |= loop_ops(g)
    return found


def float_trip_count(model: onnx.ModelProto) -> str:
    """Why an old-opset file computes something else than torch: the TorchScript exporter
    writes an unbounded loop's trip count INT64_MAX as a float Constant cast to int64, a
    conversion out of range (undefined; ONNX Runtime gets a negative count, 0 iterations)."""
    consts = {n.output[0]: onnx.numpy_helper.to_array(n.attribute[0].t)
              for n in model.graph.node if n.op_type == "Constant" and n.attribute
              and n.attribute[0].type == onnx.AttributeProto.TENSOR}
    for node in model.graph.node:
        if node.op_type == "Cast" and node.input[0] in consts:
            value = consts[node.input[0]]
            to = next(a.i for a in node.attribute if a.name == "to")
            if (to == onnx.TensorProto.INT64 and value.dtype.kind == "f"
                    and value.size == 1 and float(value) >= 2.0 ** 63):
                return ("the exporter writes the loop's unbounded trip count 2**63-1 as a "
                        f"float Constant cast to int64 ({node.name}), out of int64 range")
    return ""


def ov_loop_ops(model) -> set:
    kinds = {"Loop", "TensorIterator", "LSTMSequence", "GRUSequence", "RNNSequence"}
    return {op.get_type_name() for op in model.get_ordered_ops()
            if op.get_type_name() in kinds}


ONNX_DTYPES = {
    onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.INT32: np.int32, onnx.TensorProto.BOOL: np.bool_,
    onnx.TensorProto.DOUBLE: np.float64,
}


def match_declared(model: onnx.ModelProto, outputs: list, notes: list) -> list:
    """Cast the torch outputs to the element types the file declares (and say so)."""
    fixed = []
    for out, arr in zip(model.graph.output, outputs):
        want = ONNX_DTYPES.get(out.type.tensor_type.elem_type)
        if want is not None and arr.dtype != want:
            notes.append(f"output {out.name}: torch gives {arr.dtype}, the file declares "
                         f"{np.dtype(want)}; stored cast")
            arr = arr.astype(want)
        fixed.append(arr)
    return fixed


@contextlib.contextmanager
def quiet():
    """The exporters print a lot (graphs, diagnostics); keep the generator's log readable."""
    buf_out, buf_err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf_out), contextlib.redirect_stderr(buf_err):
        yield


def build(case: Case) -> nn.Module:
    torch.manual_seed(0)
    return case.make().eval()


def case_feeds(case: Case) -> dict:
    seed = sum(map(ord, case.name))
    return case.feeds(np.random.default_rng(seed))


def torch_outputs(module, feeds: dict) -> list:
    with torch.no_grad():
        return flatten(module(*[torch.from_numpy(v.copy()) for v in feeds.values()]))


class Generator:
    def __init__(self):
        versions = {
            "torch": torch.__version__, "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__, "openvino": ov.__version__,
            "onnxscript": __import__("onnxscript").__version__,
            "converter": f"torch.onnx {torch.__version__}",
        }
        self.torch = Corpus("torch", versions)
        self.ov = Corpus("torch-ov", dict(versions, converter=f"openvino {ov.__version__}"))
        self.peers = Peers()
        self.failures: list[str] = []
        self.oldest: dict[str, int] = {}
        self.onnx_for_ov: list = []

    # -- ONNX entries ------------------------------------------------------------------------

    def add_onnx(self, name, path, case, feeds, expected, converter, opset, notes,
                 only_if_ort_loads=False):
        """Check the file with its peers and record it; returns the peer results (None when
        left out)."""
        model = onnx.load(str(path))
        loops = loop_ops(model.graph)
        if not loops:
            self.failures.append(f"torch/{name}: exported without any loop (unrolled); left out")
            path.unlink()
            return None
        weights = {t.name for t in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in weights]
        if len(names) < len(model.graph.input):
            notes = notes + ["the weights are also graph inputs (initializers listed as "
                             "inputs, as this opset's IR version requires)"]
        unknown = [n for n in names if n not in feeds]
        if unknown:
            raise RuntimeError(f"{name}: inputs {unknown} renamed by the exporter")
        missing = [k for k in feeds if k not in names]
        use = {k: v for k, v in feeds.items() if k in names}
        if missing:
            notes = notes + [f"the exporter dropped the unused input(s) {missing}"]
        expected = match_declared(model, expected, notes)
        if len(expected) != len(model.graph.output):
            self.failures.append(f"torch/{name}: {len(model.graph.output)} outputs in the "
                                 f"file, torch gives {len(expected)}; left out")
            path.unlink()
            return None
        peer = self.peers.check(path, use, expected, case.rtol, case.atol)
        if only_if_ort_loads and peer.get("onnxruntime", "").startswith("error"):
            path.unlink()
            return None
        if peer.get("onnxruntime", "").startswith("mismatch"):
            notes = notes + ["ONNX Runtime's result differs from torch's on this file"
                             + (": " + float_trip_count(model) if float_trip_count(model)
                                else "")]
        desc = case.description + (" (" + "; ".join(notes) + ")" if notes else "")
        self.torch.add(name, path, use, expected, converter=converter, opset=opset,
                       rtol=case.rtol, atol=case.atol, tags=case.tags, description=desc,
                       output_names=[o.name for o in model.graph.output], peer=peer)
        print(f"  torch/{name}: {sorted(loops)} {peer}", flush=True)
        return peer

    def export_ts(self, case: Case, module, feeds, opset: int, path: Path):
        with quiet():
            torch.onnx.export(
                module, tuple(torch.from_numpy(v.copy()) for v in feeds.values()), str(path),
                dynamo=False, opset_version=opset, input_names=list(feeds),
                output_names=case.outputs, dynamic_axes=case.dynamic)

    def torchscript(self, case: Case):
        eager = build(case)
        feeds = case_feeds(case)
        expected = torch_outputs(eager, feeds)
        try:
            module = torch.jit.script(eager) if case.script else eager
        except Exception as exc:  # noqa: BLE001
            self.failures.append(f"torch/{case.name}: torch.jit.script: {first_line(exc)}")
            return
        kind = "torch.onnx TorchScript (dynamo=False) on " + (
            "torch.jit.script" if case.script else "a traced module")
        tmp = self.torch.path(f"_{case.name}", ".onnx")
        oldest, errors = None, []
        for opset in range(TS_OLDEST, self.ts_newest + 1):
            try:
                self.export_ts(case, module, feeds, opset, tmp)
                oldest = opset
                break
            except Exception as exc:  # noqa: BLE001
                errors.append((opset, first_line(exc)))
        tmp.unlink(missing_ok=True)
        if errors:
            first, last = errors[0], errors[-1]
            self.failures.append(
                f"torch/{case.name}: TorchScript export refused at opsets "
                f"{errors[0][0]}..{errors[-1][0]}: {first[1]}"
                + (f" | at {last[0]}: {last[1]}" if last[1] != first[1] else ""))
        if oldest is None:
            return
        self.oldest[case.name] = oldest
        opsets = sorted({oldest, *[o for o in case.mid_opsets if o > oldest], self.ts_newest})
        newest_path = None
        for opset in opsets:
            name = f"{case.name}_op{opset}"
            path = self.torch.path(name, ".onnx")
            try:
                self.export_ts(case, module, feeds, opset, path)
            except Exception as exc:  # noqa: BLE001
                self.failures.append(f"torch/{name}: TorchScript export: {first_line(exc)}")
                continue
            notes = list(case.notes)
            if opset == oldest and oldest != self.ts_newest:
                notes.append(f"opset {opset} is the oldest the TorchScript exporter accepts "
                             "for this model")
            peer = self.add_onnx(name, path, case, feeds, expected, kind, opset, notes)
            if peer:
                newest_path = (name, path, opset)
            if opset == oldest and peer and peer.get("onnxruntime", "").startswith("error"):
                self.oldest_ort_runs(case, module, feeds, expected, kind, oldest, opsets)
        if case.ov_onnx and newest_path:
            self.onnx_for_ov.append((case, feeds, expected) + newest_path)
        if case.ov_torch:
            self.ov_pytorch(case, eager if case.ov_trace else module, feeds, expected,
                            "torchscript")

    def oldest_ort_runs(self, case, module, feeds, expected, kind, oldest, taken):
        """Where ONNX Runtime cannot load the oldest file (e.g. the exporter's ConstantFill
        at opset 7), also keep the oldest opset whose file it loads."""
        for opset in range(oldest + 1, 12):
            if opset in taken:
                return
            name = f"{case.name}_op{opset}"
            path = self.torch.path(name, ".onnx")
            try:
                self.export_ts(case, module, feeds, opset, path)
            except Exception:  # noqa: BLE001 - the search goes on
                continue
            note = "the oldest opset whose file ONNX Runtime loads for this model"
            if self.add_onnx(name, path, case, feeds, expected, kind, opset,
                             case.notes + [note], only_if_ort_loads=True):
                return

    def dynamo(self, case: Case):
        eager = build(case)
        feeds = case_feeds(case)
        expected = torch_outputs(eager, feeds)
        args = tuple(torch.from_numpy(v.copy()) for v in feeds.values())
        first = None
        for opset in (None, self.dynamo_newest):
            tmp = self.torch.path(f"_{case.name}_dynamo", ".onnx")
            kw = {} if opset is None else {"opset_version": opset}
            try:
                with quiet():
                    torch.onnx.export(eager, args, str(tmp), dynamo=True,
                                      input_names=list(feeds), output_names=case.outputs,
                                      external_data=False, **kw)
            except Exception as exc:  # noqa: BLE001
                tmp.unlink(missing_ok=True)
                label = "default opset" if opset is None else f"opset {opset}"
                self.failures.append(f"torch/{case.name}_dynamo: dynamo export at {label}: "
                                     f"{first_line(exc)}")
                continue
            got = onnx.load(str(tmp), load_external_data=False)
            version = next(o.version for o in got.opset_import if o.domain in ("", "ai.onnx"))
            if opset is None:
                self.dynamo_default = version
            name = f"{case.name}_dynamo_op{version}"
            path = self.torch.path(name, ".onnx")
            if path.exists():
                tmp.unlink()
                continue
            tmp.rename(path)
            notes = list(case.notes)
            if got.functions:
                notes.append(f"{len(got.functions)} model-local function(s)")
            label = "default" if opset is None else "newest"
            notes.append(f"the dynamo exporter's {label} opset")
            if self.add_onnx(name, path, case, feeds, expected,
                             "torch.onnx dynamo (dynamo=True)", version, notes):
                first = first or (name, path, version)
        if case.ov_onnx and first:
            self.onnx_for_ov.append((case, feeds, expected) + first)
        if case.ov_torch:
            self.ov_pytorch(case, eager, feeds, expected, "dynamo")

    # -- OpenVINO IR entries -----------------------------------------------------------------

    def add_ir(self, name, model, case, feeds, expected, converter, desc, opset=None):
        path = self.ov.path(name, ".xml")
        ov.save_model(model, str(path), compress_to_fp16=False)
        loops = ov_loop_ops(model)
        if not loops:
            self.failures.append(f"torch-ov/{name}: converted without any loop; left out")
            path.unlink()
            path.with_suffix(".bin").unlink(missing_ok=True)
            return
        names = [p.get_any_name() for p in model.inputs]
        if len(names) != len(feeds):
            self.failures.append(f"torch-ov/{name}: {len(names)} inputs in the IR, "
                                 f"{len(feeds)} feeds; left out")
            path.unlink()
            path.with_suffix(".bin").unlink(missing_ok=True)
            return
        # the IR's inputs follow the module's arguments (PyTorch frontend) or the ONNX
        # inputs (ONNX frontend); both are the order of ``feeds``
        use = dict(zip(names, feeds.values()))
        if len(model.outputs) != len(expected):
            self.failures.append(f"torch-ov/{name}: {len(model.outputs)} outputs in the IR, "
                                 f"torch gives {len(expected)}; left out")
            path.unlink()
            path.with_suffix(".bin").unlink(missing_ok=True)
            return
        notes = []
        fixed = []
        for port, arr in zip(model.outputs, expected):
            want = port.get_element_type().to_dtype()
            if arr.dtype != want:
                notes.append(f"output {port.get_index()}: torch gives {arr.dtype}, the IR "
                             f"declares {np.dtype(want)}; stored cast")
                arr = arr.astype(want)
            fixed.append(arr)
        peer = self.peers.check(path, use, fixed, case.rtol, case.atol)
        out_names = [sorted(p.get_names())[0] if p.get_names() else None
                     for p in model.outputs]
        self.ov.add(name, path, use, fixed, converter=converter, opset=opset,
                    rtol=case.rtol, atol=case.atol, tags=case.tags,
                    description=desc + (" (" + "; ".join(notes) + ")" if notes else ""),
                    output_names=out_names if all(out_names) else None, peer=peer)
        print(f"  torch-ov/{name}: {sorted(loops)} {peer}", flush=True)

    def ov_onnx_frontend(self):
        for case, feeds, expected, name, path, opset in self.onnx_for_ov:
            try:
                with quiet():
                    model = ov.convert_model(str(path))
            except Exception as exc:  # noqa: BLE001
                self.failures.append(f"torch-ov/{name}_onnxfe: ov.convert_model: "
                                     f"{first_line(exc)}")
                continue
            onnx_model = onnx.load(str(path))
            weights = {t.name for t in onnx_model.graph.initializer}
            order = [i.name for i in onnx_model.graph.input if i.name not in weights]
            use = {k: feeds[k] for k in order if k in feeds}
            self.add_ir(f"{name}_onnxfe", model, case, use, expected,
                        f"OpenVINO {ov.__version__} ONNX frontend (ov.convert_model on "
                        f"models/torch/{path.name})",
                        case.description + f"; converted from the opset-{opset} ONNX file",
                        opset=opset)

    def ov_pytorch(self, case: Case, module, feeds, expected, how: str):
        name = f"{case.name}_{'dynamo_' if how == 'dynamo' else ''}ptfe"
        args = tuple(torch.from_numpy(v.copy()) for v in feeds.values())
        if case.ov_trace:
            src = module
            what = "eager module (traced by OpenVINO)"
        elif how == "dynamo":
            try:
                with quiet():
                    src = torch.export.export(module, args)
            except Exception as exc:  # noqa: BLE001
                self.failures.append(f"torch-ov/{name}: torch.export: {first_line(exc)}")
                return
            what = "torch.export ExportedProgram"
        else:
            src = module
            what = ("torch.jit.script module" if case.script
                    else "eager module (traced by OpenVINO)")
        try:
            with quiet():
                model = ov.convert_model(src, example_input=args)
        except Exception as exc:  # noqa: BLE001
            self.failures.append(f"torch-ov/{name}: ov.convert_model ({what}): "
                                 f"{first_line(exc)}")
            return
        self.add_ir(name, model, case, feeds, expected,
                    f"OpenVINO {ov.__version__} PyTorch frontend (ov.convert_model on a {what})",
                    case.description + f"; converted from the {what}")

    def run(self):
        self.ts_newest = self.newest_ts()
        self.dynamo_newest = self.newest_dynamo()
        print(f"TorchScript exporter newest opset {self.ts_newest}; "
              f"dynamo newest {self.dynamo_newest}")
        for case in TS_CASES:
            print(f"[torchscript] {case.name}", flush=True)
            self.torchscript(case)
        for case in DYNAMO_CASES:
            print(f"[dynamo] {case.name}", flush=True)
            self.dynamo(case)
        print("[openvino onnx frontend]", flush=True)
        self.ov_onnx_frontend()
        self.peers.close()
        self.torch.save()
        self.ov.save()
        self.summary()

    def newest_ts(self) -> int:
        module = torch.jit.script(ForRangeInput())
        path = self.torch.path("_probe", ".onnx")
        try:
            for opset in TS_NEWEST_TRY:
                try:
                    with quiet():
                        torch.onnx.export(module, (torch.ones(2), torch.tensor(2)), str(path),
                                          dynamo=False, opset_version=opset)
                    return opset
                except Exception:  # noqa: BLE001
                    continue
        finally:
            path.unlink(missing_ok=True)
        raise RuntimeError("no opset accepted")

    def newest_dynamo(self) -> int:
        path = self.torch.path("_probe", ".onnx")
        try:
            for opset in DYNAMO_NEWEST_TRY:
                try:
                    with quiet():
                        torch.onnx.export(WhileLoopCounter(), (torch.ones(2), torch.tensor(2)),
                                          str(path), dynamo=True, opset_version=opset,
                                          external_data=False)
                    return opset
                except Exception:  # noqa: BLE001
                    continue
        finally:
            path.unlink(missing_ok=True)
        raise RuntimeError("no opset accepted")

    def summary(self):
        print("\n=== summary ===")
        for corpus in (self.torch, self.ov):
            tags: dict[str, int] = {}
            ok = {"onnxruntime": 0, "openvino": 0}
            for m in corpus.models:
                for t in m["tags"]:
                    tags[t] = tags.get(t, 0) + 1
                for peer, res in m["peer"].items():
                    ok[peer] += res == "ok"
            print(f"{corpus.source}: {len(corpus.models)} entries; peers ok {ok}")
            print("  tags: " + ", ".join(f"{k} {v}" for k, v in sorted(tags.items())))
            opsets: dict = {}
            for m in corpus.models:
                opsets[m["opset"]] = opsets.get(m["opset"], 0) + 1
            print("  opsets: " + ", ".join(f"{k}: {v}" for k, v in opsets.items()))
        print("oldest TorchScript opset per form: "
              + ", ".join(f"{k} {v}" for k, v in self.oldest.items()))
        print(f"dynamo default opset {getattr(self, 'dynamo_default', None)}, "
              f"newest {self.dynamo_newest}; TorchScript newest {self.ts_newest}")
        print(f"\nexport failures and notes ({len(self.failures)}):")
        for line in self.failures:
            print("  " + line)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    Generator().run()
