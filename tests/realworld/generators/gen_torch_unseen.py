"""Real-world corpus source ``torch-unseen``: scripted loop programs written apart from
``gen_torch.py`` (none of its forms repeated), to test the converters on loops the repository
was not tuned on.

Every program is a ``torch.jit.script`` module (or, for the ``*_dynamo`` entries, an eager
module with ``torch._higher_order_ops`` loops) exported by ``torch.onnx.export``: the
TorchScript exporter (``dynamo=False``) at two opsets between 11 and 17 picked per program,
and the dynamo exporter at its default opset. Each entry stores the feeds and torch's own
outputs; ``peer`` records how ONNX Runtime and OpenVINO's ONNX frontend fared on the file.
The forms: while loops on data (Collatz, GCD, bisection, merge of sorted rows), nested loops
with breaks, tuples / ints / bools carried, LSTMCell stepped zero or many times,
lists of rows and of varying-length slices concatenated, carried values whose rank changes,
slice and index assignment, torch.where / masked_fill in bodies, cumulative ops, loops inside
if / else, argmax and eos decoding, int64 counters with float state, iteration over empty
tensors, a dynamo while_loop that runs zero times, matrix power by squaring, insertion sort,
scatter_add / index_add, and others. Where ONNX Runtime computes something else than torch
on the exported file (an exporter bug), the entry's outputs are ONNX Runtime's
(``oracle="onnxruntime"``).

Run by hand from the repository root, in the environment of ``gen_torch.py`` (README.md)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_torch_unseen.py
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import openvino as ov
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch._higher_order_ops.scan import scan
from torch._higher_order_ops.while_loop import while_loop

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import Corpus  # noqa: E402
from gen_torch import (  # noqa: E402
    Case,
    Peers,
    build,
    case_feeds,
    f32,
    first_line,
    i64,
    loop_ops,
    match_declared,
    quiet,
    torch_outputs,
)

torch.set_num_threads(1)
warnings.filterwarnings("ignore")
SOURCE = "torch-unseen"


# --------------------------------------------------------------------------------------------
# the programs
# --------------------------------------------------------------------------------------------

class Collatz(nn.Module):
    """Elementwise Collatz steps on int64 values until every value is 1; counts the steps."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        steps = torch.zeros_like(x)
        while bool((x > 1).any()):
            active = x > 1
            nxt = torch.where(x % 2 == 0, x // 2, 3 * x + 1)
            x = torch.where(active, nxt, x)
            steps = steps + active.long()
        return x, steps


class GcdLoop(nn.Module):
    """Euclid's algorithm on int64 pairs, elementwise, while any remainder is nonzero."""

    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        while bool((b != 0).any()):
            nz = b != 0
            r = torch.where(nz, a % torch.where(nz, b, torch.ones_like(b)), b)
            a = torch.where(nz, b, a)
            b = torch.where(nz, r, torch.zeros_like(b))
        return a


class Bisection(nn.Module):
    """Bisection for x**3 = c on [0, 4], until the bracket is narrower than tol."""

    def forward(self, c: Tensor, tol: Tensor) -> tuple[Tensor, int]:
        lo = torch.zeros_like(c)
        hi = torch.full_like(c, 4.0)
        it = 0
        while bool((hi - lo).max() > tol):
            mid = (lo + hi) * 0.5
            up = mid * mid * mid > c
            hi = torch.where(up, mid, hi)
            lo = torch.where(up, lo, mid)
            it += 1
        return (lo + hi) * 0.5, it


class RowsFilterCat(nn.Module):
    """``for row in x``: append only rows with a positive sum, then cat with a first row."""

    def forward(self, x: Tensor) -> Tensor:
        outs: list[Tensor] = [torch.zeros(1, x.size(1))]
        for row in x:
            if bool(row.sum() > 0):
                outs.append(row.unsqueeze(0) * 2.0)
        return torch.cat(outs, 0)


class NestedEarlyBreak(nn.Module):
    """Two nested loops; the inner one breaks when its accumulator passes a limit."""

    def forward(self, x: Tensor, limit: Tensor) -> tuple[Tensor, Tensor]:
        total = torch.zeros(())
        counts: list[int] = []
        for i in range(x.size(0)):
            acc = torch.zeros(())
            c = 0
            for j in range(x.size(1)):
                acc = acc + x[i, j].abs()
                c += 1
                if bool(acc > limit):
                    break
            total = total + acc
            counts.append(c)
        return total, torch.tensor(counts)


class TupleIntBoolCarry(nn.Module):
    """A while loop carrying a tuple of tensors, an int and a bool flag set in the body."""

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, Tensor, int, bool]:
        state = (x, torch.zeros_like(x))
        i = 0
        done = False
        while not done:
            a, b = state
            state = (a * 0.5 + b, b + 1.0)
            i += 1
            done = i >= int(n) or bool(a.abs().max() < 0.01)
        return state[0], state[1], i, done


class LSTMCellSteps(nn.Module):
    """``nn.LSTMCell`` stepped n times (n may be 0) on a fixed input; h and c out."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 6)

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        h = torch.zeros(x.size(0), 6)
        c = torch.zeros(x.size(0), 6)
        for _ in range(int(n)):
            h, c = self.cell(x, (h, c))
        return h, c


class LSTMCellRows(nn.Module):
    """``nn.LSTMCell`` over the rows of a time-major input (zero rows allowed), states
    stacked after the initial state. (A scripted ``nn.GRUCell`` does not export: the
    TorchScript exporter fails on its ``hx.dim() not in (1, 2)`` check.)"""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(3, 5)

    def forward(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
        hs: list[Tensor] = [h]
        c = torch.zeros_like(h)
        for t in range(x.size(0)):
            h, c = self.cell(x[t], (h, c))
            hs.append(h)
        return torch.stack(hs, 0), c


class VaryingSlicesCat(nn.Module):
    """Slices of varying length x[i, :k_i] (k_i data-dependent), concatenated, with lengths."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        pieces: list[Tensor] = []
        lens: list[int] = []
        for i in range(x.size(0)):
            k = int((x[i] > 0).sum())
            pieces.append(x[i, :k])
            lens.append(k)
        return torch.cat(pieces, 0), torch.tensor(lens)


class RankChangingCarry(nn.Module):
    """A carried value whose rank changes with the iteration (1-D, then 2-D, then 1-D ...)."""

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        z = x
        total = torch.zeros(())
        for i in range(int(n)):
            if i % 2 == 0:
                z = z.unsqueeze(0) * 2.0
            else:
                z = z.sum(0) - 1.0
            total = total + z.sum()
        return z.reshape(-1), total


class SliceAssignDiag(nn.Module):
    """``out[i, :i + 1] = x[i, :i + 1].cumsum(0)``: slice assignment with a growing bound."""

    def forward(self, x: Tensor) -> Tensor:
        out = torch.zeros_like(x)
        for i in range(x.size(0)):
            out[i, : i + 1] = x[i, : i + 1].cumsum(0)
        return out


class IndexPutColumns(nn.Module):
    """Column writes ``h[:, k] = ...`` reading the previous column."""

    def forward(self, x: Tensor) -> Tensor:
        h = x.clone()
        for k in range(1, x.size(1)):
            h[:, k] = torch.tanh(h[:, k - 1] + x[:, k])
        return h


class WhereMaskBody(nn.Module):
    """torch.where and masked_fill in the body: clip, reset negatives, count resets."""

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        resets = torch.zeros(x.shape, dtype=torch.long)
        for _ in range(int(n)):
            x = x * 1.7 - 0.3
            neg = x < 0
            resets = resets + neg.long()
            x = x.masked_fill(neg, 0.25)
            x = torch.where(x > 2.0, x - 2.0, x)
        return x, resets


class CumulativeOps(nn.Module):
    """cumsum along both axes, a reversed cumsum (flip) and a running max in the body."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        run = x
        for _ in range(int(n)):
            a = torch.cumsum(run, 0)
            b = torch.flip(torch.cumsum(torch.flip(run, [1]), 1), [1])
            run = torch.tanh(a - b) + torch.maximum(run, torch.zeros_like(run))
        return run


class LoopsInIfElse(nn.Module):
    """A for loop in one branch of an if, a while loop in the other."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        if bool(x.sum() > 0):
            for i in range(int(n)):
                x = x - 0.1 * float(i)
        else:
            while bool(x.sum() < 0):
                x = x + 0.5
        return x


class ArgmaxEosDecode(nn.Module):
    """Decoding: argmax of a score, stop per row at EOS (token 0), lengths and tokens out."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.proj = nn.Linear(4, 6)

    def forward(self, start: Tensor, max_len: Tensor) -> tuple[Tensor, Tensor]:
        tok = start
        finished = torch.zeros(start.shape, dtype=torch.bool)
        lengths = torch.zeros(start.shape, dtype=torch.long)
        toks: list[Tensor] = []
        for _ in range(int(max_len)):
            logits = self.proj(torch.tanh(self.emb(tok)))
            tok = logits.argmax(-1)
            tok = tok.masked_fill(finished, 0)
            toks.append(tok)
            lengths = lengths + (~finished).long()
            finished = finished | (tok == 0)
            if bool(finished.all()):
                break
        return torch.stack(toks, 1), lengths


class Int64CounterFloatState(nn.Module):
    """An int64 tensor counter compared with an input, float state updated from it."""

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        i = torch.zeros((), dtype=torch.long)
        s = x
        while bool(i < n):
            s = s + i.float() * 0.25 - s * 0.1
            i = i + 2
        return s, i


class EmptyRows(nn.Module):
    """``for row in x`` over an input that has zero rows: the loop never runs."""

    def forward(self, x: Tensor, h: Tensor) -> Tensor:
        for row in x:
            h = torch.tanh(h + row)
        return h * 2.0


class RangeStepInput(nn.Module):
    """``range(start, stop, step)`` with all three from inputs."""

    def forward(self, x: Tensor, start: Tensor, stop: Tensor, step: Tensor) -> Tensor:
        for i in range(int(start), int(stop), int(step)):
            x = x + float(i) * 0.1
        return x


class MatrixPower(nn.Module):
    """Matrix power by repeated squaring: ``while k > 0`` with int division."""

    def forward(self, a: Tensor, k: Tensor) -> Tensor:
        r = torch.eye(a.size(0))
        kk = int(k)
        while kk > 0:
            if kk % 2 == 1:
                r = r @ a
            a = a @ a
            kk = kk // 2
        return r


class InsertionSort(nn.Module):
    """Insertion sort of a 1-D tensor with scalar-indexed swaps (index_put in a while)."""

    def forward(self, x: Tensor) -> Tensor:
        x = x.clone()
        for i in range(1, x.size(0)):
            j = i
            while j > 0 and bool(x[j - 1] > x[j]):
                tmp = x[j].clone()
                x[j] = x[j - 1]
                x[j - 1] = tmp
                j -= 1
        return x


class MergeSorted(nn.Module):
    """Merge two sorted 1-D tensors with two int cursors in a while loop."""

    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        i = 0
        j = 0
        out: list[Tensor] = []
        while i < a.size(0) and j < b.size(0):
            if bool(a[i] <= b[j]):
                out.append(a[i])
                i += 1
            else:
                out.append(b[j])
                j += 1
        while i < a.size(0):
            out.append(a[i])
            i += 1
        while j < b.size(0):
            out.append(b[j])
            j += 1
        return torch.stack(out)


class AttentionSteps(nn.Module):
    """Dot-product attention step by step: query t against all keys, softmax, weighted sum."""

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        outs: list[Tensor] = []
        for t in range(q.size(0)):
            w = torch.softmax(k @ q[t] / 2.0, 0)
            outs.append(w @ v)
        return torch.stack(outs)


class GrowWidth(nn.Module):
    """State grown along axis 1 with torch.cat each step."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        y = x
        for _ in range(int(n)):
            y = torch.cat([y, y[:, -1:].sin()], 1)
        return y


class GatherCarriedIndex(nn.Module):
    """A float state picks an index (argmin) that gathers from a table; index carried."""

    def forward(self, table: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        idx = torch.zeros(table.size(1), dtype=torch.long)
        acc = torch.zeros(table.size(1))
        for _ in range(int(n)):
            row = table.gather(0, idx.unsqueeze(0)).squeeze(0)
            acc = acc + row
            idx = (idx + (row > 0).long() + 1) % table.size(0)
        return acc, idx


class ThreeLevels(nn.Module):
    """Three nested loops with trip counts from inputs and a shape."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        for i in range(int(n)):
            for j in range(x.size(0)):
                for k in range(2):
                    x = x + float(i + j * k) * 0.01
                x = x * 0.99
        return x


class IntListTensor(nn.Module):
    """A List[int] built in a while loop from data, turned into a tensor."""

    def forward(self, x: Tensor) -> Tensor:
        vals: list[int] = []
        v = int(x.sum().abs() * 10.0) + 1
        while v > 0:
            vals.append(v % 7)
            v = v // 7
        return torch.tensor(vals)


class FlagEarlyExit(nn.Module):
    """A bool tensor flag carried through a for loop; the loop breaks on it."""

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        flag = torch.zeros((), dtype=torch.bool)
        for _ in range(int(n)):
            x = x * 1.3
            flag = flag | (x.max() > 3.0)
            if bool(flag):
                break
        return x, flag


class RunningMaxMin(nn.Module):
    """Prefix max and min over rows with torch.maximum / torch.minimum, stacked."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        mx = x[0]
        mn = x[0]
        outs: list[Tensor] = []
        for t in range(1, x.size(0)):
            mx = torch.maximum(mx, x[t])
            mn = torch.minimum(mn, x[t])
            outs.append(mx - mn)
        return torch.stack(outs), mx


class PadGrow(nn.Module):
    """F.pad grows the state by one column of ones each step, then normalises."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        for _ in range(int(n)):
            x = F.pad(x, [0, 1], value=1.0)
            x = x / x.sum(1, keepdim=True)
        return x


class Conv1dSteps(nn.Module):
    """A Conv1d applied n times (padding keeps the length), with a residual."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 2, 3, padding=1)

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        for _ in range(int(n)):
            x = x + 0.5 * torch.tanh(self.conv(x))
        return x


class LayerNormSoftmax(nn.Module):
    """layer_norm and softmax in the body of a loop over rows, rows appended."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(4)

    def forward(self, x: Tensor) -> Tensor:
        outs: list[Tensor] = []
        h = torch.zeros(x.size(1))
        for t in range(x.size(0)):
            h = self.ln(h + x[t])
            outs.append(torch.softmax(h, -1))
        return torch.stack(outs)


class ScatterAddLoop(nn.Module):
    """Histogram by index_add / scatter_add of per-row bins in a loop."""

    def forward(self, idx: Tensor, w: Tensor, nbins: Tensor) -> tuple[Tensor, Tensor]:
        hist = torch.zeros(int(nbins))
        cnt = torch.zeros(int(nbins))
        for t in range(idx.size(0)):
            hist = hist.index_add(0, idx[t], w[t])
            cnt = cnt.scatter_add(0, idx[t], torch.ones_like(w[t]))
        return hist, cnt


class RepeatRoll(nn.Module):
    """roll and repeat inside the loop (the state's width is fixed, values rotate)."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        for _ in range(int(n)):
            x = torch.roll(x, 1, 1) + x.mean(1, keepdim=True).repeat(1, x.size(1)) * 0.1
        return x


class SuffixMeans(nn.Module):
    """Means of the suffixes x[i:] (slices of shrinking length), collected."""

    def forward(self, x: Tensor) -> Tensor:
        outs: list[Tensor] = []
        for i in range(x.size(0)):
            outs.append(x[i:].mean(0))
        return torch.stack(outs)


class NonzeroCount(nn.Module):
    """torch.nonzero in the body: positions of positive entries per row, summed."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        counts: list[Tensor] = []
        possum = torch.zeros((), dtype=torch.long)
        for t in range(x.size(0)):
            nz = torch.nonzero(x[t] > 0)
            counts.append(torch.tensor(nz.size(0)))
            possum = possum + nz.sum()
        return torch.stack(counts), possum


class HalfStepsRemainder(nn.Module):
    """Pairs of rows in a loop of x.size(0) // 2 steps, the odd row handled after it."""

    def forward(self, x: Tensor) -> Tensor:
        h = torch.zeros(x.size(1))
        n = x.size(0) // 2
        for i in range(n):
            h = torch.tanh(h + x[2 * i] - x[2 * i + 1])
        if x.size(0) % 2 == 1:
            h = h + x[-1]
        return h


class TopkSortBody(nn.Module):
    """topk and sort in the body: keep the k best of state and new row."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        best = torch.full([3], -1e9)
        for t in range(x.size(0)):
            both = torch.cat([best, x[t]])
            best, _ = torch.topk(both, 3)
        s, order = torch.sort(best)
        return s, order


class ClampKeepdim(nn.Module):
    """clamp, amax / amin with keepdim, normalisation per row, in a while on an error."""

    def forward(self, x: Tensor) -> tuple[Tensor, int]:
        err = torch.ones(())
        it = 0
        while bool(err > 1e-3) and it < 50:
            lo = x.amin(1, keepdim=True)
            hi = x.amax(1, keepdim=True)
            new = torch.clamp((x - lo) / (hi - lo + 1e-6), 0.05, 0.95)
            err = (new - x).abs().max()
            x = new
            it += 1
        return x, it


class DoubleState(nn.Module):
    """float64 state with an int32 counter cast each step."""

    def forward(self, x: Tensor, n: Tensor) -> Tensor:
        c = torch.zeros((), dtype=torch.int32)
        for _ in range(int(n)):
            c = c + 1
            x = x * 0.75 + c.double() * 0.5
        return x


class ExpandBroadcast(nn.Module):
    """unsqueeze / expand / squeeze in the body: outer products accumulated."""

    def forward(self, x: Tensor) -> Tensor:
        acc = torch.zeros(x.size(1), x.size(1))
        for t in range(x.size(0)):
            r = x[t]
            acc = acc + r.unsqueeze(1).expand(-1, x.size(1)) * r.unsqueeze(0)
        return acc.squeeze()


# dynamo (torch._higher_order_ops) forms

class WhileLoopTwoCarries(nn.Module):
    """while_loop with an int64 counter, a float tensor and a float scalar carried."""

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        def cond(i, y, s):
            return i < n

        def body(i, y, s):
            return i + 1, torch.tanh(y) + s, s * 0.5 + y.mean()

        i, y, s = while_loop(cond, body, (torch.zeros((), dtype=torch.long), x,
                                          torch.ones(())))
        return i, y, s


class ScanTwoOutputs(nn.Module):
    """scan over rows carrying a running max, emitting two per-step outputs."""

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        def step(carry, row):
            m = torch.maximum(carry, row)
            return m, (m - row, (row > 0).to(torch.float32))

        m, (gaps, pos) = scan(step, x[0], x)
        return m, gaps, pos


class WhileLoopZeroTrips(nn.Module):
    """while_loop whose condition is false at once (n = 0): the carries come back as given."""

    def forward(self, x: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
        def cond(i, y):
            return i < n

        def body(i, y):
            return i + 1, y * 2.0 + 1.0

        i, y = while_loop(cond, body, (torch.zeros((), dtype=torch.long), x))
        return i, y


# --------------------------------------------------------------------------------------------
# the table: (case, TorchScript opsets)
# --------------------------------------------------------------------------------------------

def f64(rng, *shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float64)


def ints(rng, lo, hi, *shape):
    return rng.integers(lo, hi, size=shape).astype(np.int64)


A = (11, 17)
B = (13, 16)
C = (12, 15)
D = (14, 17)

TS_CASES = [
    (Case("collatz", Collatz, lambda r: {"x": ints(r, 1, 30, 2, 3)}, ("while",),
          "elementwise Collatz on int64 until all values are 1; step counts", ["y", "steps"],
          {"x": {0: "B"}}), A),
    (Case("gcd", GcdLoop, lambda r: {"a": ints(r, 1, 200, 5), "b": ints(r, 0, 200, 5)},
          ("while",), "Euclid's gcd elementwise on int64, while any remainder is nonzero",
          ["g"], {"a": {0: "N"}, "b": {0: "N"}}), B),
    (Case("bisection", Bisection,
          lambda r: {"c": f32(r, 4, lo=0.5, hi=20.0), "tol": np.array(1e-3, np.float32)},
          ("while",), "bisection for cube roots until the bracket is below tol",
          ["root", "iters"]), C),
    (Case("rows_filter_cat", RowsFilterCat, lambda r: {"x": f32(r, 6, 3)},
          ("loop", "sequence", "cond"), "for row in x: append rows with a positive sum; cat",
          ["y"], {"x": {0: "T"}}), D),
    (Case("nested_early_break", NestedEarlyBreak,
          lambda r: {"x": f32(r, 4, 5), "limit": np.array(1.5, np.float32)},
          ("loop", "nested", "break"), "inner loop breaks when |x| sums past a limit",
          ["total", "counts"], {"x": {0: "R", 1: "C"}}), A),
    (Case("tuple_int_bool_carry", TupleIntBoolCarry,
          lambda r: {"x": f32(r, 2, 3), "n": i64(6)}, ("while", "state"),
          "while not done: a tuple, an int and a bool carried", ["a", "b", "i", "done"]), B),
    (Case("lstm_cell_zero_steps", LSTMCellSteps,
          lambda r: {"x": f32(r, 2, 4), "n": i64(0)}, ("loop", "lstm"),
          "nn.LSTMCell stepped n = 0 times", ["h", "c"], {"x": {0: "B"}}), C),
    (Case("lstm_cell_many_steps", LSTMCellSteps,
          lambda r: {"x": f32(r, 2, 4), "n": i64(40)}, ("loop", "lstm"),
          "nn.LSTMCell stepped n = 40 times", ["h", "c"], {"x": {0: "B"}}), D),
    (Case("lstm_cell_rows", LSTMCellRows,
          lambda r: {"x": f32(r, 7, 2, 3), "h": f32(r, 2, 5)}, ("loop", "lstm", "sequence"),
          "nn.LSTMCell over time, states stacked after h0", ["hs", "c_out"],
          {"x": {0: "T", 1: "B"}, "h": {0: "B"}}), A),
    (Case("lstm_cell_no_rows", LSTMCellRows,
          lambda r: {"x": f32(r, 0, 2, 3), "h": f32(r, 2, 5)}, ("loop", "lstm", "empty"),
          "nn.LSTMCell over a time axis of length 0", ["hs", "c_out"],
          {"x": {0: "T", 1: "B"}, "h": {0: "B"}}), B),
    (Case("varying_slices_cat", VaryingSlicesCat, lambda r: {"x": f32(r, 5, 4)},
          ("loop", "sequence", "dynamic"),
          "x[i, :k_i] with k_i the count of positives, concatenated, lengths",
          ["flat", "lens"], {"x": {0: "R"}}), C),
    (Case("rank_changing_carry", RankChangingCarry,
          lambda r: {"x": f32(r, 3), "n": i64(5)}, ("loop", "dynamic-rank"),
          "a carried value alternately unsqueezed and summed: its rank changes per step",
          ["z", "total"]), D),
    (Case("slice_assign_diag", SliceAssignDiag, lambda r: {"x": f32(r, 4, 4)},
          ("loop", "index_put"), "out[i, :i+1] = x[i, :i+1].cumsum(0)", ["y"],
          {"x": {0: "N", 1: "N"}}), A),
    (Case("index_put_columns", IndexPutColumns, lambda r: {"x": f32(r, 3, 5)},
          ("loop", "index_put"), "h[:, k] = tanh(h[:, k-1] + x[:, k])", ["h"],
          {"x": {0: "B", 1: "T"}}), B),
    (Case("where_mask_body", WhereMaskBody, lambda r: {"x": f32(r, 2, 4), "n": i64(6)},
          ("loop", "masking"), "masked_fill and torch.where in the body; resets counted",
          ["y", "resets"]), C),
    (Case("cumulative_ops", CumulativeOps, lambda r: {"x": f32(r, 3, 4), "n": i64(3)},
          ("loop", "cumulative"), "cumsum on both axes, reversed by flip, and a maximum",
          ["y"]), D),
    (Case("loops_in_if_else_for", LoopsInIfElse,
          lambda r: {"x": f32(r, 2, 3, lo=0.1, hi=1.0), "n": i64(4)}, ("loop", "cond"),
          "a for loop inside the then-branch of an if (taken)", ["y"]), A),
    (Case("loops_in_if_else_while", LoopsInIfElse,
          lambda r: {"x": f32(r, 2, 3, lo=-1.0, hi=-0.1), "n": i64(4)}, ("while", "cond"),
          "a while loop inside the else-branch of an if (taken)", ["y"]), B),
    (Case("argmax_eos_decode", ArgmaxEosDecode,
          lambda r: {"start": i64([1, 2, 3, 4]), "max_len": i64(7)},
          ("loop", "decoder", "break", "sequence"),
          "argmax decoding with per-row EOS, masked tokens, lengths, early break",
          ["tokens", "lengths"], {"start": {0: "B"}}), C),
    (Case("int64_counter_float_state", Int64CounterFloatState,
          lambda r: {"x": f32(r, 3), "n": i64(9)}, ("while", "state"),
          "an int64 tensor counter stepping by 2, float state", ["s", "i"]), D),
    (Case("empty_rows", EmptyRows, lambda r: {"x": f32(r, 0, 3), "h": f32(r, 3)},
          ("loop", "empty"), "for row in x over a 0-row tensor", ["y"], {"x": {0: "T"}}), A),
    (Case("range_step_input", RangeStepInput,
          lambda r: {"x": f32(r, 2), "start": i64(2), "stop": i64(11), "step": i64(3)},
          ("loop",), "range(start, stop, step) from inputs", ["y"]), B),
    (Case("matrix_power", MatrixPower, lambda r: {"a": f32(r, 3, 3, lo=-0.6, hi=0.6),
                                                   "k": i64(11)},
          ("while", "cond"), "matrix power by squaring: while k > 0, if k odd", ["r"]), C),
    (Case("insertion_sort", InsertionSort, lambda r: {"x": f32(r, 7)},
          ("loop", "while", "nested", "index_put"),
          "insertion sort: a while with swaps by index inside a for", ["y"],
          {"x": {0: "N"}}), D),
    (Case("merge_sorted", MergeSorted,
          lambda r: {"a": np.sort(f32(r, 5)), "b": np.sort(f32(r, 3))},
          ("while", "sequence"), "merge of two sorted tensors with two int cursors", ["y"],
          {"a": {0: "N"}, "b": {0: "M"}}), A),
    (Case("attention_steps", AttentionSteps,
          lambda r: {"q": f32(r, 3, 4), "k": f32(r, 5, 4), "v": f32(r, 5, 2)},
          ("loop", "sequence"), "dot-product attention one query at a time", ["y"],
          {"q": {0: "Q"}, "k": {0: "K"}, "v": {0: "K"}}), B),
    (Case("grow_width", GrowWidth, lambda r: {"x": f32(r, 2, 2), "n": i64(4)},
          ("loop", "growing"), "state grown along axis 1", ["y"]), C),
    (Case("gather_carried_index", GatherCarriedIndex,
          lambda r: {"table": f32(r, 5, 3), "n": i64(6)}, ("loop", "state", "gather"),
          "an index carried and used to gather from a table", ["acc", "idx"]), D),
    (Case("three_levels", ThreeLevels, lambda r: {"x": f32(r, 3, 2), "n": i64(2)},
          ("loop", "nested"), "three nested loops", ["y"], {"x": {0: "N"}}), A),
    (Case("int_list_tensor", IntListTensor, lambda r: {"x": f32(r, 3, 2, lo=1, hi=9)},
          ("while", "sequence"), "base-7 digits of a data-dependent int in a List[int]",
          ["digits"]), B),
    (Case("flag_early_exit", FlagEarlyExit, lambda r: {"x": f32(r, 3), "n": i64(20)},
          ("loop", "break", "state"), "a bool tensor flag carried; break on it",
          ["y", "flag"]), C),
    (Case("running_max_min", RunningMaxMin, lambda r: {"x": f32(r, 6, 3)},
          ("loop", "sequence"), "prefix max minus prefix min over rows", ["spans", "mx"],
          {"x": {0: "T"}}), D),
    (Case("pad_grow", PadGrow, lambda r: {"x": f32(r, 2, 2, lo=0.1, hi=1.0), "n": i64(3)},
          ("loop", "growing"), "F.pad grows the state one column per step", ["y"]), A),
    (Case("conv1d_steps", Conv1dSteps, lambda r: {"x": f32(r, 1, 2, 6), "n": i64(4)},
          ("loop", "conv"), "a residual Conv1d applied n times", ["y"],
          {"x": {2: "L"}}), B),
    (Case("layernorm_softmax", LayerNormSoftmax, lambda r: {"x": f32(r, 5, 4)},
          ("loop", "sequence", "norm"), "LayerNorm and softmax in a loop over rows", ["y"],
          {"x": {0: "T"}}), C),
    (Case("scatter_add_loop", ScatterAddLoop,
          lambda r: {"idx": ints(r, 0, 4, 3, 5), "w": f32(r, 3, 5), "nbins": i64(4)},
          ("loop", "scatter"), "index_add and scatter_add histograms", ["hist", "cnt"],
          {"idx": {0: "T"}, "w": {0: "T"}}), D),
    (Case("repeat_roll", RepeatRoll, lambda r: {"x": f32(r, 2, 4), "n": i64(3)},
          ("loop",), "torch.roll and repeat in the body", ["y"]), A),
    (Case("suffix_means", SuffixMeans, lambda r: {"x": f32(r, 5, 2)},
          ("loop", "sequence", "dynamic"), "means of the suffixes x[i:]", ["y"],
          {"x": {0: "T"}}), B),
    (Case("nonzero_count", NonzeroCount, lambda r: {"x": f32(r, 4, 5)},
          ("loop", "sequence", "dynamic"), "torch.nonzero in the body", ["counts", "possum"],
          {"x": {0: "T"}}), C),
    (Case("half_steps_remainder", HalfStepsRemainder, lambda r: {"x": f32(r, 7, 3)},
          ("loop", "cond"), "pairs of rows, odd row after the loop", ["h"],
          {"x": {0: "T"}}), D),
    (Case("topk_sort_body", TopkSortBody, lambda r: {"x": f32(r, 5, 4)},
          ("loop", "topk"), "topk of state and new row each step, sort after", ["s", "order"],
          {"x": {0: "T"}}), A),
    (Case("clamp_keepdim", ClampKeepdim, lambda r: {"x": f32(r, 3, 4)},
          ("while",), "clamp / amin / amax keepdim normalisation until it settles",
          ["y", "iters"]), B),
    (Case("double_state", DoubleState, lambda r: {"x": f64(r, 3), "n": i64(5)},
          ("loop", "float64"), "float64 state with an int32 counter", ["y"]), C),
    (Case("expand_broadcast", ExpandBroadcast, lambda r: {"x": f32(r, 4, 3)},
          ("loop",), "outer products by unsqueeze / expand accumulated", ["acc"],
          {"x": {0: "T"}}), D),
]

DYNAMO_CASES = [
    Case("while_loop_two_carries", WhileLoopTwoCarries,
         lambda r: {"x": f32(r, 2, 3), "n": i64(4)}, ("while", "state"),
         "while_loop carrying an int64 counter, a tensor and a scalar", ["i", "y", "s"]),
    Case("scan_two_outputs", ScanTwoOutputs, lambda r: {"x": f32(r, 5, 3)},
         ("scan",), "scan with a running max and two scanned outputs", ["m", "gaps", "pos"]),
    Case("while_loop_zero_trips", WhileLoopZeroTrips,
         lambda r: {"x": f32(r, 2, 3), "n": i64(0)}, ("while", "empty"),
         "while_loop whose condition is false at once", ["i", "y"]),
]


# --------------------------------------------------------------------------------------------
# export and record
# --------------------------------------------------------------------------------------------

class Generator:
    def __init__(self):
        versions = {
            "torch": torch.__version__, "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__, "openvino": ov.__version__,
            "onnxscript": __import__("onnxscript").__version__,
            "converter": f"torch.onnx {torch.__version__}",
        }
        self.corpus = Corpus(SOURCE, versions)
        self.peers = Peers()
        self.failures: list[str] = []

    def add(self, name, path, case, feeds, expected, converter, opset):
        model = onnx.load(str(path))
        loops = loop_ops(model.graph)
        if not loops:
            self.failures.append(f"{name}: exported without any loop; left out")
            path.unlink()
            return
        weights = {t.name for t in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in weights]
        unknown = [n for n in names if n not in feeds]
        if unknown:
            self.failures.append(f"{name}: inputs {unknown} renamed by the exporter; left out")
            path.unlink()
            return
        use = {k: v for k, v in feeds.items() if k in names}
        notes: list[str] = []
        if len(use) < len(feeds):
            notes.append(f"the exporter dropped the unused input(s) "
                         f"{[k for k in feeds if k not in names]}")
        expected = match_declared(model, expected, notes)
        if len(expected) != len(model.graph.output):
            self.failures.append(f"{name}: {len(model.graph.output)} outputs in the file, "
                                 f"torch gives {len(expected)}; left out")
            path.unlink()
            return
        peer = self.peers.check(path, use, expected, case.rtol, case.atol)
        oracle = "framework"
        if peer.get("onnxruntime", "").startswith("mismatch"):
            # the exporter wrote a file that computes something else than torch (e.g.
            # index_add with repeated indices as a ScatterElements that overwrites): the
            # file's own semantics, as ONNX Runtime runs it, are what a converter must keep
            sess = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            notes.append("torch.onnx's file computes something else than torch (ONNX Runtime "
                         f"on it: {peer['onnxruntime']}); the expected outputs are ONNX "
                         "Runtime's")
            expected = [np.asarray(v) for v in sess.run(None, use)]
            oracle = "onnxruntime"
            peer = self.peers.check(path, use, expected, case.rtol, case.atol)
        desc = case.description + (" (" + "; ".join(notes) + ")" if notes else "")
        self.corpus.add(name, path, use, expected, converter=converter, opset=opset,
                        oracle=oracle,
                        rtol=case.rtol, atol=case.atol, tags=case.tags, description=desc,
                        output_names=[o.name for o in model.graph.output], peer=peer)
        print(f"  {name}: {sorted(loops)} {peer}", flush=True)

    def torchscript(self, case: Case, opsets):
        eager = build(case)
        feeds = case_feeds(case)
        try:
            expected = torch_outputs(eager, feeds)
            module = torch.jit.script(eager)
        except Exception as exc:  # noqa: BLE001
            self.failures.append(f"{case.name}: torch / script: {first_line(exc)}")
            return
        for opset in opsets:
            name = f"{case.name}_op{opset}"
            path = self.corpus.path(name, ".onnx")
            try:
                with quiet():
                    torch.onnx.export(
                        module, tuple(torch.from_numpy(v.copy()) for v in feeds.values()),
                        str(path), dynamo=False, opset_version=opset,
                        input_names=list(feeds), output_names=case.outputs,
                        dynamic_axes=case.dynamic)
            except Exception as exc:  # noqa: BLE001
                path.unlink(missing_ok=True)
                self.failures.append(f"{name}: TorchScript export: {first_line(exc)}")
                continue
            self.add(name, path, case, feeds, expected,
                     "torch.onnx TorchScript (dynamo=False) on torch.jit.script", opset)

    def dynamo(self, case: Case):
        eager = build(case)
        feeds = case_feeds(case)
        expected = torch_outputs(eager, feeds)
        args = tuple(torch.from_numpy(v.copy()) for v in feeds.values())
        tmp = self.corpus.path(f"_{case.name}", ".onnx")
        try:
            with quiet():
                torch.onnx.export(eager, args, str(tmp), dynamo=True, input_names=list(feeds),
                                  output_names=case.outputs, external_data=False)
        except Exception as exc:  # noqa: BLE001
            tmp.unlink(missing_ok=True)
            self.failures.append(f"{case.name}_dynamo: dynamo export: {first_line(exc)}")
            return
        got = onnx.load(str(tmp))
        version = next(o.version for o in got.opset_import if o.domain in ("", "ai.onnx"))
        name = f"{case.name}_dynamo_op{version}"
        path = self.corpus.path(name, ".onnx")
        tmp.rename(path)
        self.add(name, path, case, feeds, expected, "torch.onnx dynamo (dynamo=True)", version)

    def run(self):
        only = set(sys.argv[1:])
        for case, opsets in TS_CASES:
            if only and case.name not in only:
                continue
            print(f"[torchscript] {case.name}", flush=True)
            self.torchscript(case, opsets)
        for case in DYNAMO_CASES:
            if only and case.name not in only:
                continue
            print(f"[dynamo] {case.name}", flush=True)
            self.dynamo(case)
        self.peers.close()
        self.corpus.save()
        ok = {"onnxruntime": 0, "openvino": 0}
        for m in self.corpus.models:
            for peer, res in m["peer"].items():
                ok[peer] += res == "ok"
        print(f"\n{SOURCE}: {len(self.corpus.models)} entries; peers ok {ok}")
        print(f"export failures and notes ({len(self.failures)}):")
        for line in self.failures:
            print("  " + line)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    Generator().run()
