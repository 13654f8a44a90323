"""OpenVINO ``FakeQuantize`` (domain ``org.openvinotoolkit``) for NumPy and ``jax.numpy`` alike,
shared by both backends. With NumPy broadcasting of all five inputs::

    y = output_low                      where x <= min(input_low, input_high)
    y = output_high                     where x >  max(input_low, input_high)
    y = round((x - input_low) / (input_high - input_low) * (levels - 1))
        / (levels - 1) * (output_high - output_low) + output_low   elsewhere

``round`` is half to even (``nearbyint``).
"""

from __future__ import annotations

from ...ir.traits import OPENVINO_DOMAIN as DOMAIN  # noqa: F401  (the op's domain)


def fake_quantize(xp, x, in_low, in_high, out_low, out_high, levels: int):
    steps = levels - 1
    q = xp.round((x - in_low) / (in_high - in_low) * steps)
    mid = q / steps * (out_high - out_low) + out_low
    y = xp.where(x <= xp.minimum(in_low, in_high), out_low,
                 xp.where(x > xp.maximum(in_low, in_high), out_high, mid))
    return y.astype(x.dtype)
