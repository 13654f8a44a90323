"""Scripted PyTorch loops over an LSTMCell, exported by torch.onnx (TorchScript exporter), for
the OpenVINO writer's tests (`tests/openvino/test_ov_write_torch_loops.py`): the ways people
collect a cell's states in a loop. Each ``NAME_opN.onnx`` has ``NAME_opN.npz`` beside it with
feeds and torch's own outputs for 6 steps (``steps6_*``) and, where torch computes it, for 0
steps (``steps0_*``). ``packed_*.onnx``: ``nn.LSTM``/``nn.GRU`` over packed sequences
(``pack_padded_sequence``: ONNX ``sequence_lens``), input shapes dynamic, with ``packed_*.npz``
(``x``, ``lens``, ``out0``, ``out1``).

Run by hand from the repository root (needs torch 2.13, CPU)::

    python tests/openvino/data/torch_loops/gen.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

HERE = Path(__file__).parent
torch.manual_seed(0)


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 5)


class StackList(Cell):
    """outs.append(h); torch.stack(outs)."""

    def forward(self, x: Tensor, h: Tensor, c: Tensor):
        outs: list[Tensor] = []
        for t in range(x.size(0)):
            h, c = self.cell(x[t], (h, c))
            outs.append(h)
        return torch.stack(outs), h, c


class OverRows(Cell):
    """for xt in x: iterating the tensor's rows."""

    def forward(self, x: Tensor, h: Tensor, c: Tensor):
        outs: list[Tensor] = []
        for xt in x:
            h, c = self.cell(xt, (h, c))
            outs.append(h)
        return torch.stack(outs), h, c


class GrowByCat(Cell):
    """hs = torch.cat([hs, h.unsqueeze(0)]) from an empty tensor: a carried value that grows."""

    def forward(self, x: Tensor, h: Tensor, c: Tensor):
        hs = torch.zeros(0, x.size(1), 5)
        for t in range(x.size(0)):
            h, c = self.cell(x[t], (h, c))
            hs = torch.cat([hs, h.unsqueeze(0)], 0)
        return hs, h, c


class IndexWrite(Cell):
    """hs[t] = h into a preallocated tensor (ScatterND in the body)."""

    def forward(self, x: Tensor, h: Tensor, c: Tensor):
        hs = torch.zeros(x.size(0), x.size(1), 5)
        for t in range(x.size(0)):
            h, c = self.cell(x[t], (h, c))
            hs[t] = h
        return hs, h, c


class GrowAndSum(Cell):
    """A grown history read inside the loop (its sum feeds the next step)."""

    def forward(self, x: Tensor, h: Tensor, c: Tensor):
        hs = torch.zeros(0, x.size(1), 5)
        for t in range(x.size(0)):
            h, c = self.cell(x[t] + hs.sum(0).sum(1, keepdim=True), (h, c))
            hs = torch.cat([hs, h.unsqueeze(0)], 0)
        return hs, h, c


class Packed(nn.Module):
    """An RNN over padded sequences of different lengths, as packed sequences."""

    def __init__(self, kind: str, bidirectional: bool):
        super().__init__()
        self.rnn = getattr(nn, kind)(4, 5, batch_first=True, bidirectional=bidirectional)

    def forward(self, x: Tensor, lens: Tensor):
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

        p = pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
        y, state = self.rnn(p)
        y, _ = pad_packed_sequence(y, batch_first=True, total_length=x.size(1))
        return y, (state[0] if isinstance(state, tuple) else state)


def packed() -> None:
    x, lens = torch.randn(3, 6, 4), torch.tensor([6, 2, 4])
    for kind, bidirectional in (("LSTM", True), ("GRU", False)):
        module = Packed(kind, bidirectional).eval()
        path = HERE / f"packed_{kind.lower()}{'_bi' if bidirectional else ''}_op17.onnx"
        torch.onnx.export(module, (x, lens), str(path), opset_version=17, dynamo=False,
                          input_names=["x", "lens"], output_names=["y", "h"],
                          dynamic_axes={"x": {0: "N", 1: "T"}, "lens": {0: "N"}})
        with torch.no_grad():
            y, h = module(x, lens)
        np.savez(path.with_suffix(".npz"), x=x.numpy(), lens=lens.numpy(), out0=y.numpy(),
                 out1=h.numpy())
        print(path.name)


def main() -> None:
    rng = np.random.default_rng(0)
    for cls in (StackList, OverRows, GrowByCat, IndexWrite, GrowAndSum):
        module = torch.jit.script(cls().eval())
        name = "".join("_" + ch.lower() if ch.isupper() else ch for ch in cls.__name__)[1:]
        h0 = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))
        c0 = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))
        data = {}
        for steps in (6, 0):
            x = torch.from_numpy(rng.standard_normal((steps, 3, 4)).astype(np.float32))
            try:
                with torch.no_grad():
                    outs = module(x, h0, c0)
            except Exception:  # noqa: BLE001 - torch.stack of no tensors: no oracle
                continue
            data.update({f"steps{steps}_x": x.numpy(), f"steps{steps}_h": h0.numpy(),
                         f"steps{steps}_c": c0.numpy()})
            data.update({f"steps{steps}_out{i}": o.numpy() for i, o in enumerate(outs)})
        x = torch.from_numpy(data["steps6_x"])
        for opset in (13, 17):
            path = HERE / f"{name}_op{opset}.onnx"
            torch.onnx.export(module, (x, h0, c0), str(path), opset_version=opset, dynamo=False,
                              input_names=["x", "h", "c"], output_names=["hs", "hn", "cn"],
                              dynamic_axes={"x": {0: "T"}})
            np.savez(path.with_suffix(".npz"), **data)
            print(path.name, sorted(k for k in data if k.endswith("out0")))


if __name__ == "__main__":
    main()
    packed()
