"""One progress line in tqdm's format, shared by a loop's progress (`inspect.progress`) and
``run-many``'s (`scale.jobs.Progress`)."""

from __future__ import annotations


def meter(prefix: str, n: int, total: int | None, elapsed: float, unit: str = "step") -> str:
    """tqdm's progress line: ``prefix: 45%|████▌     | 2250/5000 [00:00<00:01, 2393.62step/s]``
    (without `total`: ``prefix: 2250step [00:00, 2393.62step/s]``)."""
    from tqdm import tqdm

    return tqdm.format_meter(n, total, elapsed, unit=unit, prefix=prefix, ncols=100)
