"""Resampling and search: ``Interpolate``/``Resize``, ``GridSample``, ``Col2Im``,
``SearchSorted``, adaptive pooling."""
