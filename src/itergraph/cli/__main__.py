"""``python -m itergraph.cli``: the ``itergraph`` command."""

import sys

from . import main

sys.exit(main())
