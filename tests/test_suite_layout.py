"""The suite's own layout: pytest imports test modules by their file name (``rootdir``-less
"prepend" import mode), so two test files of one name in different folders make the second
an import error ("import file mismatch") in whichever worker collects both."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path


def test_test_file_names_are_unique():
    by_name = defaultdict(list)
    for f in Path(__file__).parent.rglob("test_*.py"):
        by_name[f.name].append(str(f.relative_to(Path(__file__).parent)))
    twice = {n: fs for n, fs in by_name.items() if len(fs) > 1}
    assert not twice, f"test files sharing a name: {twice}"
