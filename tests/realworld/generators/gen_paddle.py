"""Real-world corpus source ``paddle``: PaddlePaddle programs converted by paddle2onnx.

Every program is a ``paddle.nn.Layer`` turned into a static program by
``paddle.jit.to_static(..., full_graph=True)`` (Paddle's dy2static: Python ``for`` / ``while``
over tensors become ``while`` ops, ``if`` on a tensor becomes ``cond``), and exported by
``paddle.onnx.export`` (paddle2onnx, with its default Polygraphy constant folding) at two or
three opsets between 11 and 18 picked per program. The forms: while loops on data (halving,
Newton, Collatz, GCD, bisection), ``for i in range(n)`` with a tensor ``n`` (zero trips too),
breaks and bool flags, ``if`` on tensors alone and inside loops, ``paddle.static.nn.cond`` and
``paddle.static.nn.while_loop`` called directly, nested loops, cumulative ops in a body,
``paddle.nn.LSTM`` / ``GRU`` (one or two layers, forward or bidirectional,
time-major, initial states, ``sequence_length``), ``LSTMCell`` / ``GRUCell`` stepped in loops,
greedy and beam-search-like decoding with ``topk`` / ``argmax``, and a small CRNN text
recognizer head (conv, batch norm, pooling, two bidirectional LSTM layers, a classifier and a
greedy CTC argmax) as PaddleOCR ships it. (``nn.SimpleRNN`` is left out: paddle2onnx 2.1
unrolls it, so its files hold no loop.)

Paddle runs each program and paddle2onnx exports it in a child process (paddle2onnx aborts
its process on programs it cannot convert, and Paddle's PIR crashes now and then; a crash
before Paddle's outputs are saved is retried once). paddle2onnx raises the opset to the
lowest its op mappers need, so entries are named by the opset the file holds.

Each entry stores the feeds and the outputs of Paddle's own static program; ``peer`` records
how ONNX Runtime and OpenVINO's ONNX frontend fared on the file (in a child process, so a crash
is a result). Where ONNX Runtime computes something else than Paddle on the exported file (a
converter bug), the entry's outputs are ONNX Runtime's (``oracle="onnxruntime"``) and the
description says so. Programs that do not convert are listed at the end of the run.

Run by hand from the repository root (generators/README.md)::

    python tests/realworld/generators/gen_paddle.py [NAME ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("POLYGRAPHY_AUTOINSTALL_DEPS", "0")
os.environ.setdefault("GLOG_minloglevel", "3")

# --------------------------------------------------------------------------------------------
# Generator proper (imports Paddle)
# --------------------------------------------------------------------------------------------
import logging  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime  # noqa: E402
import openvino as ov  # noqa: E402
import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
import paddle2onnx  # noqa: E402
from paddle import nn  # noqa: E402
from paddle.static import InputSpec  # noqa: E402
from peer_record import run_peer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import ROOT, Corpus  # noqa: E402

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
paddle.set_device("cpu")
SOURCE = "paddle"
CONTROL_OPS = {"Loop", "If", "Scan", "LSTM", "GRU", "RNN"}


# --------------------------------------------------------------------------------------------
# the programs: Python control flow on tensors, turned into while / cond by dy2static
# --------------------------------------------------------------------------------------------

class WhileHalving(nn.Layer):
    """Halve x until every |x| <= 1; count the halvings."""

    def forward(self, x):
        steps = paddle.zeros([1], "int64")
        while paddle.max(paddle.abs(x)) > 1.0:
            x = x * 0.5
            steps = steps + 1
        return x, steps


class ForRangeTensor(nn.Layer):
    """``for i in range(n)`` with a tensor n: an affine recurrence using the index."""

    def forward(self, x, n):
        for i in range(n):
            x = x * 0.9 + paddle.cast(i, "float32") * 0.1
        return x


class WhileCounterAnd(nn.Layer):
    """A while loop on two conditions joined by ``and``: a counter and a running sum."""

    def forward(self, x, n, limit):
        i = paddle.zeros([1], "int64")
        s = paddle.zeros([1], "float32")
        while i < n and s < limit:
            s = s + paddle.sum(paddle.abs(x)) * 0.25
            x = paddle.tanh(x + 0.5)
            i += 1
        return x, s, i


class NewtonSqrt(nn.Layer):
    """Newton's iteration for sqrt(a) until the largest step is below tol."""

    def forward(self, a, tol):
        y = paddle.ones_like(a)
        step = paddle.full([1], 1.0e9, "float32")
        while step > tol:
            nxt = 0.5 * (y + a / y)
            step = paddle.max(paddle.abs(nxt - y))
            y = nxt
        return y


class Collatz(nn.Layer):
    """Elementwise Collatz steps on int64 values until every value is 1; steps counted."""

    def forward(self, x):
        steps = paddle.zeros_like(x)
        while paddle.any(x > 1):
            active = x > 1
            nxt = paddle.where(x % 2 == 0, x // 2, 3 * x + 1)
            x = paddle.where(active, nxt, x)
            steps = steps + paddle.cast(active, "int64")
        return x, steps


class Gcd(nn.Layer):
    """Euclid's algorithm on int64 pairs, elementwise, while any remainder is nonzero."""

    def forward(self, a, b):
        while paddle.any(b != 0):
            nz = b != 0
            safe = paddle.where(nz, b, paddle.ones_like(b))
            r = paddle.where(nz, a % safe, b)
            a = paddle.where(nz, b, a)
            b = paddle.where(nz, r, paddle.zeros_like(b))
        return a


class Bisection(nn.Layer):
    """Bisection for x**3 = c on [0, 4] until the bracket is narrower than tol."""

    def forward(self, c, tol):
        lo = paddle.zeros_like(c)
        hi = paddle.full_like(c, 4.0)
        it = paddle.zeros([1], "int32")
        while paddle.max(hi - lo) > tol:
            mid = (lo + hi) * 0.5
            up = mid * mid * mid > c
            hi = paddle.where(up, mid, hi)
            lo = paddle.where(up, lo, mid)
            it += 1
        return (lo + hi) * 0.5, it


class ForBreak(nn.Layer):
    """Accumulate rows of x until the running sum passes a limit, then break."""

    def forward(self, x, limit):
        s = paddle.zeros([x.shape[1]], "float32")
        k = paddle.zeros([1], "int64")
        for i in range(x.shape[0]):
            if paddle.sum(s) > limit:
                break
            s = s + x[i]
            k += 1
        return s, k


class IfOnTensor(nn.Layer):
    """``if`` on a tensor outside any loop: two different branches."""

    def forward(self, x):
        if paddle.sum(x) > 0:
            y = paddle.exp(x) - 1.0
        else:
            y = x * x - x
        return y


class IfInLoop(nn.Layer):
    """An ``if`` on the loop index's parity and one on the data, inside a for loop."""

    def forward(self, x, n):
        for i in range(n):
            if i % 2 == 0:
                x = x + 1.0
            else:
                x = x * 0.5
            if paddle.max(x) > 3.0:
                x = x - 2.0
        return x


class StaticCond(nn.Layer):
    """``paddle.static.nn.cond`` called directly, with two outputs per branch."""

    def forward(self, x, y):
        def yes():
            return x + y, paddle.sum(x)

        def no():
            return x - y, paddle.max(y)

        return paddle.static.nn.cond(paddle.sum(x) < paddle.sum(y), yes, no)


class StaticWhileLoop(nn.Layer):
    """``paddle.static.nn.while_loop`` called directly: three loop variables."""

    def forward(self, x, n):
        i = paddle.zeros([1], "int64")
        acc = paddle.zeros_like(x)

        def cond(i, x, acc):
            return i < n

        def body(i, x, acc):
            return [i + 1, x * 0.8 + 0.3, acc + x]

        i, x, acc = paddle.static.nn.while_loop(cond, body, [i, x, acc])
        return i, x, acc


class NestedFor(nn.Layer):
    """Two nested for loops over tensor bounds."""

    def forward(self, x, n, m):
        total = paddle.zeros_like(x)
        for i in range(n):
            for j in range(m):
                total = total + x * paddle.cast(i + j, "float32")
            x = paddle.sin(x)
        return total


class WhileInFor(nn.Layer):
    """A data-dependent while loop nested inside a for loop over the rows."""

    def forward(self, x):
        out = paddle.zeros_like(x)
        for i in range(x.shape[0]):
            row = x[i]
            while paddle.max(paddle.abs(row)) > 0.5:
                row = row * 0.7
            out[i] = row
        return out


class CumsumInLoop(nn.Layer):
    """cumsum on both axes (one reversed) in a loop body."""

    def forward(self, x, n):
        for _ in range(n):
            x = paddle.cumsum(x, axis=1) * 0.3
            x = paddle.flip(paddle.cumsum(paddle.flip(x, [0]), axis=0), [0]) * 0.5
        return x


class CumulativeOps(nn.Layer):
    """cumsum along both axes in a while loop until the values settle below a bound.
    (paddle2onnx 2.1 has no mapping for ``cumprod``.)"""

    def forward(self, x):
        it = paddle.zeros([1], "int64")
        while paddle.max(paddle.abs(x)) > 0.1:
            x = paddle.cumsum(x, axis=1) * 0.2 - paddle.cumsum(x, axis=0) * 0.1
            it += 1
        return x, it


class LstmUni(nn.Layer):
    """``nn.LSTM``, one layer, forward, batch-major: outputs and final states."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 6)

    def forward(self, x):
        y, (h, c) = self.rnn(x)
        return y, h, c


class LstmBiTwoLayers(nn.Layer):
    """``nn.LSTM``, two layers, bidirectional."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(3, 5, num_layers=2, direction="bidirect")

    def forward(self, x):
        y, (h, c) = self.rnn(x)
        return y, h, c


class LstmSeqLen(nn.Layer):
    """``nn.LSTM`` bidirectional with ``sequence_length`` (padded batch)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(3, 4, direction="bidirect")

    def forward(self, x, lengths):
        y, (h, c) = self.rnn(x, sequence_length=lengths)
        return y, h, c


class LstmTimeMajorInit(nn.Layer):
    """``nn.LSTM`` time-major with initial states given as inputs."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 5, time_major=True)

    def forward(self, x, h0, c0):
        y, (h, c) = self.rnn(x, (h0, c0))
        return y, h, c


class GruBi(nn.Layer):
    """``nn.GRU`` bidirectional, one layer."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 6, direction="bidirect")

    def forward(self, x):
        y, h = self.rnn(x)
        return y, h


class GruTwoLayersInit(nn.Layer):
    """``nn.GRU``, two layers, forward, with an initial state."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 4, num_layers=2)

    def forward(self, x, h0):
        y, h = self.rnn(x, h0)
        return y, h


class GruSeqLen(nn.Layer):
    """``nn.GRU`` forward with ``sequence_length``."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 5)

    def forward(self, x, lengths):
        y, h = self.rnn(x, sequence_length=lengths)
        return y, h


class LstmCellSteps(nn.Layer):
    """``nn.LSTMCell`` stepped n times (n may be 0) on a fixed input."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 6)

    def forward(self, x, n):
        h = paddle.zeros([x.shape[0], 6], "float32")
        c = paddle.zeros([x.shape[0], 6], "float32")
        for _ in range(n):
            _, (h, c) = self.cell(x, (h, c))
        return h, c


class GruCellRows(nn.Layer):
    """``nn.GRUCell`` over the time axis of a batch-major input, mean of the states."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, 5)

    def forward(self, x):
        h = paddle.zeros([x.shape[0], 5], "float32")
        acc = paddle.zeros([x.shape[0], 5], "float32")
        for t in range(x.shape[1]):
            _, h = self.cell(x[:, t], h)
            acc = acc + h
        return h, acc / paddle.cast(x.shape[1], "float32")


class GreedyDecode(nn.Layer):
    """Greedy decoding with a GRUCell: argmax token fed back, stops when every row has
    produced the end token 1 or after max_len steps; tokens kept in a fixed buffer."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(7, 5)
        self.cell = nn.GRUCell(5, 8)
        self.out = nn.Linear(8, 7)

    def forward(self, h, max_len):
        b = h.shape[0]
        tok = paddle.zeros([b], "int64")
        done = paddle.zeros([b], "bool")
        buf = paddle.zeros([b, 8], "int64")
        t = paddle.zeros([1], "int64")
        while t < max_len and not paddle.all(done):
            _, h = self.cell(self.emb(tok), h)
            tok = paddle.argmax(self.out(h), axis=-1)
            tok = paddle.where(done, paddle.zeros_like(tok), tok)
            hot = F.one_hot(t, 8).astype("int64")
            buf = buf + tok.unsqueeze(1) * hot
            done = paddle.logical_or(done, tok == 1)
            t += 1
        return buf, t


class BeamSearch(nn.Layer):
    """A beam-search-like decoding loop: log-softmax scores added to the beams', topk over
    the flattened beam x vocabulary, the winning beams' histories gathered."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.proj = nn.Linear(4, 6)

    def forward(self, scores, n):
        k = 3
        tok = paddle.arange(k, dtype="int64")
        hist = paddle.zeros([k, 1], "int64")
        for _ in range(n):
            logp = F.log_softmax(self.proj(paddle.tanh(self.emb(tok))), axis=-1)
            total = paddle.reshape(logp + scores.unsqueeze(1), [-1])
            scores, idx = paddle.topk(total, k)
            beam = idx // 6
            tok = idx % 6
            hist = paddle.concat([paddle.gather(hist, beam), tok.unsqueeze(1)], axis=1)
        return scores, hist


class MatrixPower(nn.Layer):
    """Matrix power by squaring: ``while k > 0``, ``if k`` odd."""

    def forward(self, a, k):
        r = paddle.eye(a.shape[0], dtype="float32")
        while k > 0:
            if k % 2 == 1:
                r = paddle.matmul(r, a)
            a = paddle.matmul(a, a)
            k = k // 2
        return r


class AttentionRows(nn.Layer):
    """Dot-product attention one query row at a time, written into an output buffer."""

    def forward(self, q, k, v):
        out = paddle.zeros([q.shape[0], v.shape[1]], "float32")
        for i in range(q.shape[0]):
            w = F.softmax(paddle.matmul(k, q[i]) * 0.5, axis=0)
            out[i] = paddle.matmul(w, v)
        return out


class FlagEarlyExit(nn.Layer):
    """A bool flag carried by a while loop and set in its body."""

    def forward(self, x, n):
        i = paddle.zeros([1], "int64")
        flag = paddle.zeros([1], "bool")
        while i < n and not flag:
            x = x * 1.5 - 0.2
            flag = paddle.max(x) > 2.0
            i += 1
        return x, flag, i


class ListStack(nn.Layer):
    """Rows computed in a loop appended to a Python list, stacked after the loop."""

    def forward(self, x):
        outs = []
        h = paddle.zeros([x.shape[1]], "float32")
        for i in range(x.shape[0]):
            h = paddle.tanh(h * 0.5 + x[i])
            outs.append(h)
        return paddle.stack(outs, axis=0)


class CrnnHead(nn.Layer):
    """A CRNN text recognizer as PaddleOCR's: conv / batch norm / relu / pooling collapse
    the height, two bidirectional LSTM layers run over the width, a classifier gives per-step
    probabilities, and greedy CTC decoding takes their argmax."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2D(8)
        self.conv2 = nn.Conv2D(8, 12, 3, padding=1)
        self.bn2 = nn.BatchNorm2D(12)
        self.rnn = nn.LSTM(12, 8, num_layers=2, direction="bidirect")
        self.fc = nn.Linear(16, 11)
        rng = np.random.default_rng(7)
        for bn in (self.bn1, self.bn2):
            c = bn._mean.shape[0]
            bn._mean.set_value(rng.uniform(-0.2, 0.2, c).astype("float32"))
            bn._variance.set_value(rng.uniform(0.5, 1.5, c).astype("float32"))

    def forward(self, img):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(img))), 2, 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), (4, 1), (4, 1))
        x = paddle.transpose(paddle.squeeze(x, axis=2), [0, 2, 1])
        y, _ = self.rnn(x)
        probs = F.softmax(self.fc(y), axis=-1)
        return probs, paddle.argmax(probs, axis=-1)


# --------------------------------------------------------------------------------------------
# case table
# --------------------------------------------------------------------------------------------

@dataclass
class Case:
    """One program: how to build it, its input specs (None: a dynamic axis), its feeds."""

    name: str
    make: Callable[[], nn.Layer]
    spec: list
    feeds: Callable[[np.random.Generator], dict]
    tags: tuple
    description: str
    opsets: tuple
    rtol: float = 1e-4
    atol: float = 1e-5


def f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def i64(v):
    return np.array(v, dtype=np.int64).reshape(-1)


def fl(v):
    return np.array(v, dtype=np.float32).reshape(-1)


def S(shape, dtype, name):  # noqa: N802 - reads like InputSpec
    return InputSpec(shape, dtype, name)


A, B, C, D = (11, 14, 17), (12, 15, 18), (13, 16), (11, 13, 17)
N1 = S([1], "int64", "n")
CASES = [
    Case("while_halving", WhileHalving, [S([None, 3], "float32", "x")],
         lambda r: {"x": f32(r, 2, 3, lo=-9, hi=9)}, ("while",),
         "halve until every |x| <= 1, count", A),
    Case("for_range_tensor", ForRangeTensor, [S([2, 3], "float32", "x"), N1],
         lambda r: {"x": f32(r, 2, 3), "n": i64(5)}, ("loop",),
         "for i in range(n) with a tensor n", B),
    Case("for_range_zero_trips", ForRangeTensor, [S([2, 3], "float32", "x"), N1],
         lambda r: {"x": f32(r, 2, 3), "n": i64(0)}, ("loop", "empty"),
         "for i in range(n) run zero times", C),
    Case("while_counter_and", WhileCounterAnd,
         [S([3], "float32", "x"), N1, S([1], "float32", "limit")],
         lambda r: {"x": f32(r, 3), "n": i64(9), "limit": fl(2.5)}, ("while",),
         "while i < n and s < limit", D),
    Case("newton_sqrt", NewtonSqrt, [S([None], "float32", "a"), S([1], "float32", "tol")],
         lambda r: {"a": f32(r, 5, lo=0.5, hi=9), "tol": fl(1e-5)}, ("while",),
         "Newton's sqrt until the step is below tol", A),
    Case("collatz", Collatz, [S([None], "int64", "x")],
         lambda r: {"x": i64([6, 7, 1, 12, 27])}, ("while", "int"),
         "elementwise Collatz steps, counted", B),
    Case("gcd", Gcd, [S([None], "int64", "a"), S([None], "int64", "b")],
         lambda r: {"a": i64([48, 17, 100, 0]), "b": i64([18, 5, 75, 9])}, ("while", "int"),
         "Euclid's algorithm elementwise", C),
    Case("bisection", Bisection, [S([None], "float32", "c"), S([1], "float32", "tol")],
         lambda r: {"c": f32(r, 4, lo=0.5, hi=20), "tol": fl(1e-4)}, ("while",),
         "bisection for the cube root, int32 counter", D),
    Case("for_break", ForBreak, [S([None, 3], "float32", "x"), S([1], "float32", "limit")],
         lambda r: {"x": f32(r, 6, 3, lo=0, hi=1), "limit": fl(3.0)}, ("loop", "break"),
         "rows summed until a limit, break", A),
    Case("if_on_tensor_then", IfOnTensor, [S([None, 3], "float32", "x")],
         lambda r: {"x": f32(r, 2, 3, lo=0.1, hi=1)}, ("cond",),
         "if on a tensor (then-branch taken)", B),
    Case("if_on_tensor_else", IfOnTensor, [S([None, 3], "float32", "x")],
         lambda r: {"x": f32(r, 2, 3, lo=-1, hi=-0.1)}, ("cond",),
         "if on a tensor (else-branch taken)", C),
    Case("if_in_loop", IfInLoop, [S([2, 3], "float32", "x"), N1],
         lambda r: {"x": f32(r, 2, 3), "n": i64(7)}, ("loop", "cond"),
         "if on the index parity and on the data in a for loop", D),
    Case("static_cond", StaticCond, [S([3], "float32", "x"), S([3], "float32", "y")],
         lambda r: {"x": f32(r, 3), "y": f32(r, 3, lo=0, hi=2)}, ("cond",),
         "paddle.static.nn.cond with two outputs per branch", A),
    Case("static_while_loop", StaticWhileLoop, [S([None, 2], "float32", "x"), N1],
         lambda r: {"x": f32(r, 3, 2), "n": i64(6)}, ("while",),
         "paddle.static.nn.while_loop with three loop variables", B),
    Case("nested_for", NestedFor,
         [S([2, 2], "float32", "x"), N1, S([1], "int64", "m")],
         lambda r: {"x": f32(r, 2, 2), "n": i64(3), "m": i64(4)}, ("loop", "nested"),
         "two nested for loops over tensor bounds", C),
    Case("while_in_for", WhileInFor, [S([None, 3], "float32", "x")],
         lambda r: {"x": f32(r, 4, 3, lo=-3, hi=3)}, ("loop", "while", "nested"),
         "a data-dependent while inside a for over rows, rows written back", D),
    Case("cumsum_in_loop", CumsumInLoop, [S([3, 4], "float32", "x"), N1],
         lambda r: {"x": f32(r, 3, 4), "n": i64(3)}, ("loop", "cumulative"),
         "cumsum on both axes, one reversed by flip", A),
    Case("cumulative_ops", CumulativeOps, [S([2, 4], "float32", "x")],
         lambda r: {"x": f32(r, 2, 4, lo=-2, hi=2)}, ("while", "cumulative"),
         "cumsum on both axes until the values settle", B),
    Case("lstm_uni", LstmUni, [S([None, None, 4], "float32", "x")],
         lambda r: {"x": f32(r, 2, 5, 4)}, ("rnn", "lstm"),
         "nn.LSTM one layer, forward", C),
    Case("lstm_bi_two_layers", LstmBiTwoLayers, [S([None, None, 3], "float32", "x")],
         lambda r: {"x": f32(r, 3, 4, 3)}, ("rnn", "lstm", "bidirectional"),
         "nn.LSTM two layers, bidirectional", D),
    Case("lstm_seq_len", LstmSeqLen,
         [S([None, None, 3], "float32", "x"), S([None], "int64", "lengths")],
         lambda r: {"x": f32(r, 3, 5, 3), "lengths": i64([5, 3, 1])},
         ("rnn", "lstm", "bidirectional", "seq-len"),
         "nn.LSTM bidirectional with sequence_length", A),
    Case("lstm_time_major_init", LstmTimeMajorInit,
         [S([None, None, 4], "float32", "x"), S([1, None, 5], "float32", "h0"),
          S([1, None, 5], "float32", "c0")],
         lambda r: {"x": f32(r, 6, 2, 4), "h0": f32(r, 1, 2, 5), "c0": f32(r, 1, 2, 5)},
         ("rnn", "lstm", "time-major"), "nn.LSTM time-major with initial states", B),
    Case("gru_bi", GruBi, [S([None, None, 4], "float32", "x")],
         lambda r: {"x": f32(r, 2, 6, 4)}, ("rnn", "gru", "bidirectional"),
         "nn.GRU bidirectional", C),
    Case("gru_two_layers_init", GruTwoLayersInit,
         [S([None, None, 3], "float32", "x"), S([2, None, 4], "float32", "h0")],
         lambda r: {"x": f32(r, 3, 5, 3), "h0": f32(r, 2, 3, 4)}, ("rnn", "gru"),
         "nn.GRU two layers with an initial state", D),
    Case("gru_seq_len", GruSeqLen,
         [S([None, None, 3], "float32", "x"), S([None], "int64", "lengths")],
         lambda r: {"x": f32(r, 3, 4, 3), "lengths": i64([4, 2, 3])},
         ("rnn", "gru", "seq-len"), "nn.GRU with sequence_length", A),
    Case("lstm_cell_steps", LstmCellSteps, [S([None, 4], "float32", "x"), N1],
         lambda r: {"x": f32(r, 3, 4), "n": i64(4)}, ("loop", "lstm"),
         "nn.LSTMCell stepped n times", D),
    Case("lstm_cell_zero_steps", LstmCellSteps, [S([None, 4], "float32", "x"), N1],
         lambda r: {"x": f32(r, 3, 4), "n": i64(0)}, ("loop", "lstm", "empty"),
         "nn.LSTMCell stepped zero times", A),
    Case("gru_cell_rows", GruCellRows, [S([None, None, 3], "float32", "x")],
         lambda r: {"x": f32(r, 2, 5, 3)}, ("loop", "gru"),
         "nn.GRUCell over the time axis, mean of states", B),
    Case("greedy_decode", GreedyDecode, [S([None, 8], "float32", "h"),
                                         S([1], "int64", "max_len")],
         lambda r: {"h": f32(r, 3, 8), "max_len": i64(8)}, ("while", "decoder", "break"),
         "greedy GRUCell decoding with end tokens and a step limit", C),
    Case("beam_search", BeamSearch, [S([3], "float32", "scores"), N1],
         lambda r: {"scores": fl([0.0, -1.0, -2.0]), "n": i64(4)},
         ("loop", "decoder", "topk", "growing"),
         "beam-search-like topk decoding with gathered histories", D),
    Case("matrix_power", MatrixPower, [S([3, 3], "float32", "a"), S([1], "int64", "k")],
         lambda r: {"a": f32(r, 3, 3, lo=-0.6, hi=0.6), "k": i64(11)}, ("while", "cond"),
         "matrix power by squaring", A),
    Case("attention_rows", AttentionRows,
         [S([None, 4], "float32", "q"), S([None, 4], "float32", "k"),
          S([None, 2], "float32", "v")],
         lambda r: {"q": f32(r, 3, 4), "k": f32(r, 5, 4), "v": f32(r, 5, 2)},
         ("loop", "setitem"), "attention one query row at a time", B),
    Case("flag_early_exit", FlagEarlyExit, [S([3], "float32", "x"), N1],
         lambda r: {"x": f32(r, 3, lo=0.5, hi=1), "n": i64(20)}, ("while", "break"),
         "a bool flag carried and set in the body", C),
    Case("list_stack", ListStack, [S([None, 3], "float32", "x")],
         lambda r: {"x": f32(r, 5, 3)}, ("loop", "sequence"),
         "rows appended to a list in a loop, stacked", D),
    Case("crnn_head", CrnnHead, [S([None, 1, 8, None], "float32", "img")],
         lambda r: {"img": f32(r, 2, 1, 8, 16, lo=0, hi=1)}, ("rnn", "lstm", "ocr", "conv"),
         "CRNN recognizer head: conv, bn, pool, 2 bi-LSTM layers, fc, softmax, argmax", A,
         rtol=1e-4, atol=1e-5),
]


# --------------------------------------------------------------------------------------------
# export and record
# --------------------------------------------------------------------------------------------

def logged_error(text: str) -> str:
    """paddle2onnx logs a conversion failure instead of raising it: its message."""
    lines = [ln.strip() for ln in text.splitlines()]
    said = [ln for ln in lines if "[ERROR]" in ln or "not supported" in ln]
    said = said or [ln for ln in lines if "rror" in ln or "Failed" in ln]
    return " ".join(said[:2])[:300] if said else "no message"


def control_ops(graph: onnx.GraphProto) -> set:
    found = set()
    for node in graph.node:
        if node.op_type in CONTROL_OPS:
            found.add(node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                found |= control_ops(attr.g)
            for g in attr.graphs:
                found |= control_ops(g)
    return found


ONNX_DTYPES = {
    onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.INT32: np.int32, onnx.TensorProto.BOOL: np.bool_,
    onnx.TensorProto.DOUBLE: np.float64,
}


def match_declared(model: onnx.ModelProto, outputs: list, notes: list) -> list:
    """Cast Paddle's outputs to the element types the file declares (and say so)."""
    fixed = []
    for out, arr in zip(model.graph.output, outputs):
        want = ONNX_DTYPES.get(out.type.tensor_type.elem_type)
        if want is not None and arr.dtype != want:
            notes.append(f"output {out.name}: Paddle gives {arr.dtype}, the file declares "
                         f"{np.dtype(want)}; stored cast")
            arr = arr.astype(want)
        fixed.append(arr)
    return fixed


def flatten(value) -> list:
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in flatten(v)]
    return [np.asarray(value.numpy())]


EXPORT_FLAG = "--export"


def case_feeds(case: Case) -> dict:
    return case.feeds(np.random.default_rng(sum(map(ord, case.name))))


def export_in_child(case: Case, opsets: list, folder: Path) -> tuple[list, str, list | None]:
    """Run ``case`` in Paddle and export it at each of ``opsets`` in a child process
    (paddle2onnx aborts the process on some programs): the opsets written, in order, the
    error that stopped it, and Paddle's outputs (None when the child died before them)."""
    cmd = [sys.executable, __file__, EXPORT_FLAG, case.name, str(folder),
           *map(str, opsets)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return [], "timed out after 600 s", None
    lines = proc.stdout.splitlines()
    done = [int(ln.split()[1]) for ln in lines if ln.startswith("EXPORTED ")]
    expected = None
    if "ORACLE" in lines:
        with np.load(folder / "_expected.npz") as z:
            expected = [z[f"out{i}"] for i in range(len(z.files))]
    text = proc.stdout + proc.stderr
    if any(ln.startswith("the static program") for ln in lines):
        print(f"  {case.name}: the static program differs from eager Paddle", flush=True)
    return done, logged_error(text) if "rror" in text else f"exit status {proc.returncode}", \
        expected


def export_child(name: str, folder: Path, opsets: list) -> None:
    """The child of `export_in_child`: ``ORACLE`` once Paddle's outputs are saved, then
    ``EXPORTED <opset>`` for each file written."""
    case = next(c for c in CASES if c.name == name)
    paddle.seed(0)
    layer = case.make()
    layer.eval()
    feeds = case_feeds(case)
    static = paddle.jit.to_static(layer, input_spec=case.spec, full_graph=True)
    expected = flatten(static(*[paddle.to_tensor(v) for v in feeds.values()]))
    eager = flatten(layer(*[paddle.to_tensor(v) for v in feeds.values()]))
    np.savez(folder / "_expected.npz", **{f"out{i}": v for i, v in enumerate(expected)})
    print("ORACLE", flush=True)
    if len(eager) != len(expected) or not all(
            np.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(eager, expected)):
        print("the static program differs from eager Paddle", flush=True)
    for opset in opsets:
        prefix = folder / f"_export_op{opset}"
        paddle.onnx.export(static, str(prefix), input_spec=case.spec, opset_version=opset,
                           auto_upgrade_opset=True)
        if not prefix.with_suffix(".onnx").exists():
            print("ERROR: paddle2onnx wrote no file", flush=True)
            return
        print(f"EXPORTED {opset}", flush=True)


class Generator:
    def __init__(self):
        import onnx_graphsurgeon
        import polygraphy
        versions = {
            "paddlepaddle": paddle.__version__, "paddle2onnx": paddle2onnx.__version__,
            "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
            "openvino": ov.__version__, "polygraphy": polygraphy.__version__,
            "onnx_graphsurgeon": onnx_graphsurgeon.__version__,
            "converter": f"paddle.onnx.export (paddle2onnx {paddle2onnx.__version__})",
        }
        self.corpus = Corpus(SOURCE, versions)
        self.failures: list[str] = []

    def peers(self, path: Path, feeds: dict, expected: list, case: Case) -> dict:
        return {rt: run_peer(rt, path, feeds, expected, case.rtol, case.atol).replace(
            f"{ROOT}/", "") for rt in ("onnxruntime", "openvino")}

    def add(self, name: str, path: Path, case: Case, feeds: dict, expected: list, opset: int):
        model = onnx.load(str(path))
        found = control_ops(model.graph)
        if not found:
            self.failures.append(f"{name}: exported without Loop / If / RNN ops; left out")
            path.unlink()
            return
        weights = {t.name for t in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in weights]
        unknown = [n for n in names if n not in feeds]
        if unknown:
            self.failures.append(f"{name}: inputs {unknown} not the program's; left out")
            path.unlink()
            return
        use = {k: v for k, v in feeds.items() if k in names}
        notes: list[str] = []
        if len(use) < len(feeds):
            notes.append(f"paddle2onnx dropped the unused input(s) "
                         f"{[k for k in feeds if k not in names]}")
        expected = match_declared(model, expected, notes)
        if len(expected) != len(model.graph.output):
            self.failures.append(f"{name}: {len(model.graph.output)} outputs in the file, "
                                 f"Paddle gives {len(expected)}; left out")
            path.unlink()
            return
        peer = self.peers(path, use, expected, case)
        oracle = "framework"
        if peer["onnxruntime"].startswith("mismatch"):
            sess = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            notes.append("paddle2onnx's file computes something else than Paddle (ONNX Runtime "
                         f"on it: {peer['onnxruntime']}); the expected outputs are ONNX "
                         "Runtime's")
            expected = [np.asarray(v) for v in sess.run(None, use)]
            oracle = "onnxruntime"
            peer = self.peers(path, use, expected, case)
        desc = case.description + (" (" + "; ".join(notes) + ")" if notes else "")
        self.corpus.add(name, path, use, expected, converter="paddle2onnx (paddle.onnx.export "
                        "of paddle.jit.to_static, full_graph=True)", opset=opset,
                        oracle=oracle, rtol=case.rtol, atol=case.atol, tags=case.tags,
                        description=desc, output_names=[o.name for o in model.graph.output],
                        peer=peer)
        print(f"  {name}: {sorted(found)} {peer}", flush=True)

    def convert(self, case: Case):
        feeds = case_feeds(case)
        remaining, expected = list(case.opsets), None
        for _ in range(2):  # Paddle itself crashes now and then (SIGSEGV in PIR): retried once
            done, error, expected = export_in_child(case, remaining, self.corpus.folder)
            if expected is not None:
                break
        if expected is None:
            self.failures.append(f"{case.name}: Paddle: {error}")
            return
        while True:
            for opset in done:
                self.keep(case, opset, feeds, expected)
            remaining = remaining[len(done):]
            if not remaining:
                return
            self.failures.append(f"{case.name}_op{remaining[0]}: paddle2onnx: {error}")
            remaining = remaining[1:]
            if not remaining:
                return
            done, error, _ = export_in_child(case, remaining, self.corpus.folder)

    def keep(self, case: Case, opset: int, feeds: dict, expected: list):
        path = self.corpus.folder / f"_export_op{opset}.onnx"
        got = onnx.load(str(path))
        version = next(o.version for o in got.opset_import if o.domain in ("", "ai.onnx"))
        # paddle2onnx raises the opset to the lowest its op mappers need
        final = self.corpus.path(f"{case.name}_op{version}", ".onnx")
        if final.exists():
            path.unlink()
            return
        path.rename(final)
        self.add(final.stem, final, case, feeds, expected, version)

    def run(self):
        only = set(sys.argv[1:])
        for case in CASES:
            if only and case.name not in only:
                continue
            print(f"[paddle] {case.name}", flush=True)
            self.convert(case)
        (self.corpus.folder / "_expected.npz").unlink(missing_ok=True)
        self.corpus.save()
        ok = {"onnxruntime": 0, "openvino": 0}
        for m in self.corpus.models:
            for peer, res in m["peer"].items():
                ok[peer] += res == "ok"
        print(f"\n{SOURCE}: {len(self.corpus.models)} entries; peers ok {ok}")
        print(f"conversion failures and notes ({len(self.failures)}):")
        for line in self.failures:
            print("  " + line)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == EXPORT_FLAG:
        export_child(sys.argv[2], Path(sys.argv[3]), [int(v) for v in sys.argv[4:]])
    else:
        Generator().run()
