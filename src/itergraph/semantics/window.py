"""The window attributes of ONNX's sliding-window ops (Conv, ConvTranspose, the pools...):
which attributes give one entry per spatial axis of the input, and ``pads`` two (begin and
end). The reader checks their lengths at load where the input's rank is known, the backends'
kernels when they run."""

from __future__ import annotations

#: attribute -> entries per spatial axis
PER_AXIS = {"kernel_shape": 1, "strides": 1, "dilations": 1, "pads": 2, "output_padding": 1}


def window_attribute_error(attrs, spatial: int) -> str | None:
    """What is wrong with the window attributes in `attrs` (name -> list of ints) for an input
    of `spatial` spatial axes, or None."""
    for name, per in PER_AXIS.items():
        v = attrs.get(name)
        if v is not None and len(v) != per * spatial:
            return (f"attribute '{name}' has {len(v)} entries; {spatial} spatial axes need "
                    f"{per * spatial}")
    return None
