"""The demo: load the two LSTM models, run them on both backends, compare with plain NumPy.

``python examples/demo.py examples/models`` (after ``make_lstm_models.py``), or ``make demo``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from make_lstm_models import inputs, lstm_reference, weights  # noqa: E402

import itergraph as ig  # noqa: E402


def main(models: Path) -> int:
    feeds = inputs()
    y_ref, h_ref, c_ref = lstm_reference(feeds["X"], feeds["h0"], feeds["c0"], weights())
    worst = 0.0
    for name in ("lstm_scan", "lstm_while"):
        model = ig.load(models / f"{name}.onnx")
        print(f"== {name}.onnx")
        print(model.info())
        for backend in ("numpy", "jax"):
            outs = model.run(feeds, backend=backend)
            print(f"  on itergraph's {backend} backend:")
            for out_name, ref in (("Y", y_ref), ("h_last", h_ref), ("c_last", c_ref)):
                got = outs[out_name]
                diff = float(np.max(np.abs(got - ref)))
                worst = max(worst, diff)
                print(f"    {out_name:7s} itergraph {got.shape} {got.reshape(-1)[:4].round(5)} | "
                      f"numpy {ref.reshape(-1)[:4].round(5)} | max |diff| {diff:.2e}")
    ok = worst < 1e-5
    print(f"\nitergraph matches the plain NumPy LSTM: {'yes' if ok else 'NO'} "
          f"(worst difference {worst:.2e})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "examples/models")))
