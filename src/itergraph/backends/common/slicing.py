"""Index arithmetic of ONNX Slice, Split and Pad, shared by both backends."""

from __future__ import annotations

from ...errors import ExecutionError, where


def split_sizes(node, dim: int, split, n: int) -> list[int]:
    """Part sizes of ONNX Split: the `split` input/attribute, or `n` (nearly) equal parts."""
    if split is None:
        if dim % n == 0:
            return [dim // n] * n
        chunk = -(-dim // n)  # num_outputs that do not divide: the last chunk is smaller
        sizes = [chunk] * (n - 1)
        sizes.append(dim - chunk * (n - 1))
        if sizes[-1] < 0:
            raise ExecutionError(f"{where(node)}: cannot split {dim} elements into {n} parts")
        return sizes
    sizes = [int(s) for s in split]
    if len(sizes) != n:
        raise ExecutionError(f"{where(node)}: {len(sizes)} split sizes for {n} outputs")
    if any(s < 0 for s in sizes):  # ONNX Runtime: "All values must be >= 0"
        raise ExecutionError(f"{where(node)}: split sizes {sizes} include a negative size")
    if sum(sizes) != dim:
        raise ExecutionError(
            f"{where(node)}: split sizes {sizes} do not add up to the axis length {dim}"
        )
    return sizes


def check_pad_crop(node, dim: int, begin: int, end: int) -> None:
    """Negative pads crop an axis; cropping more than its `dim` elements is an error (ONNX
    Runtime refuses it)."""
    if dim - max(0, -begin) - max(0, -end) < 0:
        raise ExecutionError(f"{where(node)}: pads ({begin}, {end}) remove more than the "
                             f"{dim} elements of an axis")


def slice_of(start: int, end: int, step: int, dim: int) -> slice:
    """The Python slice for one axis of ONNX Slice (start/end clamped as ONNX says)."""
    if step == 0:
        raise ValueError("slice step cannot be 0")
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start = min(max(start, 0), dim)
        end = min(max(end, 0), dim)
        return slice(start, end, step)
    start = min(max(start, -1), dim - 1)
    end = min(max(end, -1), dim - 1)
    if start < 0:
        return slice(0, 0, 1)
    return slice(start, None if end < 0 else end, step)


#: Slice-10's parameter inputs, by input index
SLICE_PARAMETERS = {1: "starts", 2: "ends", 3: "axes", 4: "steps"}


def check_slice_vectors(node, params) -> None:
    """Slice-10's `params` (starts, ends, axes, steps: arrays or None) must be vectors, as ONNX
    says and ONNX Runtime checks (a ``[[0]]`` of axes is refused, not flattened)."""
    for i, p in zip(SLICE_PARAMETERS, params):
        if p is not None and p.ndim != 1:
            raise ExecutionError(f"{where(node)}: {SLICE_PARAMETERS[i]} (input {i}) must be a "
                                 f"vector, got shape {tuple(p.shape)}")
