"""Fourier transforms (``DFT``/``IDFT``/``RDFT``/``IRDFT``, ``ISTFT``): both directions."""
