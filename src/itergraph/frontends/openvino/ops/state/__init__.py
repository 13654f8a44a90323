"""``ReadValue``/``Assign`` <-> the state nodes of `ir.state`: both directions."""
