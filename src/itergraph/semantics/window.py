"""The window attributes of ONNX's sliding-window ops (Conv, ConvTranspose, the pools...):
which attributes give one entry per spatial axis of the input, and ``pads`` two (begin and
end), and the least value of their entries. The reader checks the values at load, and the
lengths where the input's rank is known; the backends' kernels check both when they run."""

from __future__ import annotations

#: attribute -> entries per spatial axis
PER_AXIS = {"kernel_shape": 1, "strides": 1, "dilations": 1, "pads": 2, "output_padding": 1}


#: attribute -> the least value of its entries (ONNX's shape inference, and ONNX Runtime with
#: it: "must only contain positive values", "must not contain negative values")
LEAST = {"kernel_shape": 1, "strides": 1, "dilations": 1, "pads": 0, "output_padding": 0}


def window_attribute_error(attrs, spatial: int | None) -> str | None:
    """What is wrong with the window attributes in `attrs` (name -> list of ints) for an input
    of `spatial` spatial axes (None: not known, only the values are checked), or None."""
    for name, least in LEAST.items():
        v = attrs.get(name)
        if v is not None and any(int(x) < least for x in v):
            kind = "positive" if least else "non-negative"
            return f"attribute '{name}' {list(v)} must hold {kind} values only"
    for name, per in PER_AXIS.items():
        v = attrs.get(name)
        if spatial is not None and v is not None and len(v) != per * spatial:
            return (f"attribute '{name}' has {len(v)} entries; {spatial} spatial axes need "
                    f"{per * spatial}")
    return None
