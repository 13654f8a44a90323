"""``python -m itergraph``: the ``itergraph`` command."""

import sys

from .cli import main

sys.exit(main())
