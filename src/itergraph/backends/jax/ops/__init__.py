"""Lowering rules, one module per op family; each module registers into `table.LOWERINGS`."""
