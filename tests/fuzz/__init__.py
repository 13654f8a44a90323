"""A structure-aware mutation fuzzer for itergraph (see README.md in this folder).

Mutants are built deterministically from (seed model, mutation operator, rng seed) out of the
real-world corpus (`seeds`), by operators that edit the file's structure (`mutate_onnx`,
`mutate_ir`, `mutate_feeds`); each runs in a child process under the hostile harness's limits
(`runner`), its outcome is classified (`verdicts`), and campaigns are run from the command line
(``python -m tests.fuzz``).
"""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
for _d in (TESTS / "hostile", TESTS / "realworld"):
    if str(_d) not in sys.path:
        sys.path.insert(0, str(_d))
