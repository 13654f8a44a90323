"""``TensorIterator``/``Loop`` <-> the canonical `Loop`, and ``If``: both directions."""
