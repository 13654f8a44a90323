"""Random ops (``RandomUniform``, ``Multinomial``): both directions."""
