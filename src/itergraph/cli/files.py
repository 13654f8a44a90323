"""Files of the command line: ``NAME=FILE.npy`` inputs, one-line summaries of values, and
output files created only inside the directory the user named."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import InputError

_SAFE_PUNCTUATION = "._-+="
_MAX_STEM = 200  # characters; file systems allow 255 bytes per name


def summary(value) -> str:
    if value is None:
        return "empty optional"
    if isinstance(value, list):
        return f"sequence of {len(value)}: [" + ", ".join(summary(v) for v in value[:4]) + \
            (", ...]" if len(value) > 4 else "]")
    a = np.asarray(value)
    head = f"shape {a.shape} dtype {a.dtype}"
    if a.size == 0:
        return head + " (empty)"
    if a.dtype.kind in "biuf":
        f = a.astype(np.float64)
        stats = f"min {f.min():.6g} max {f.max():.6g} mean {f.mean():.6g}"
        flat = ", ".join(f"{x:.6g}" for x in f.reshape(-1)[:6]) + (" ..." if a.size > 6 else "")
        return f"{head}  {stats}  [{flat}]"
    return f"{head}  {a.reshape(-1)[:6]}"


def parse_inputs(items: list[str], names: list[str] | None = None) -> dict:
    """Feeds from ``--input`` items: ``NAME=FILE.npy``; ``FILE.npz`` (every array of it, by
    its name in the archive); ``NAME=FILE.npz`` (the array NAME of it, or its only array).
    A later item overrides an earlier one for the same input. Given the model's input
    `names`, an archive that names none of them but holds ``in0``, ``in1`` ... feeds them by
    position, its ``out0`` ... (expected outputs) left out, as the corpus's files are."""
    feeds = {}
    for item in items:
        name, sep, file = item.partition("=")
        if not sep:
            if item.lower().endswith(".npz"):
                feeds.update(_by_position(item, _npz(item), names))
                continue
            raise InputError(f"--input expects NAME=FILE.npy, NAME=FILE.npz or FILE.npz, "
                             f"got '{item}'" + (f" (the model's inputs: "
                                                f"{', '.join(repr(n) for n in names)})"
                                                if names else ""))
        if file.lower().endswith(".npz"):
            arrays = _npz(file)
            if name in arrays:
                feeds[name] = arrays[name]
            elif len(arrays) == 1:
                feeds[name] = next(iter(arrays.values()))
            else:
                raise InputError(f"'{file}' holds no array named '{name}' (it holds "
                                 f"{', '.join(repr(k) for k in arrays) or 'none'})")
            continue
        try:
            feeds[name] = np.load(file, allow_pickle=False)
        except (OSError, ValueError, MemoryError) as e:
            raise InputError(f"cannot read input '{name}' from '{file}': "
                             f"{type(e).__name__}: {e}") from None
    return feeds


def _by_position(file: str, arrays: dict, names: list[str] | None) -> dict:
    import re
    import sys

    if names is None or set(arrays) & set(names):
        return arrays
    ins = [k for k in arrays if re.fullmatch(r"in\d+", k)]
    outs = [k for k in arrays if re.fullmatch(r"out\d+", k)]
    if not ins or len(ins) + len(outs) != len(arrays) or \
            sorted(ins, key=lambda k: int(k[2:])) != [f"in{i}" for i in range(len(ins))]:
        return arrays
    if len(ins) > len(names):
        raise InputError(f"'{file}' holds {len(ins)} inputs in0 ... in{len(ins) - 1}; the "
                         f"model has {len(names)}: {', '.join(repr(n) for n in names)}")
    print(f"itergraph: '{file}': " + ", ".join(f"in{i} -> '{names[i]}'" for i in
                                              range(len(ins)))
          + " by position" + (f" ({', '.join(outs)} left out)" if outs else ""),
          file=sys.stderr)
    return {names[i]: arrays[f"in{i}"] for i in range(len(ins))}


def feeds_for(graph, args) -> dict:
    """The feeds of a command: ``--input`` items, then random values for every input left
    (`itergraph.generate`: ``--input-shapes``, ``--value-range``, ``--seed``), each generated
    input said on stderr."""
    import sys

    from ..generate import generated_feeds
    from ..shapes.fix_shapes import parse_input_shapes

    given = parse_inputs(args.input, [v.name for v in graph.inputs])
    shapes = parse_input_shapes(args.input_shapes) if args.input_shapes else {}
    ranges = parse_input_shapes(args.value_range, numbers=True) if args.value_range else {}
    for k, v in ranges.items():
        if len(v) != 2 or not v[0] < v[1]:
            raise InputError(f"--value-range {k}: expected [LOW,HIGH] with LOW < HIGH, got "
                             f"{list(v)}")
    feeds, said = generated_feeds(graph, given, shapes, args.seed, ranges)
    for line in said:
        print(f"itergraph: {line}", file=sys.stderr)
    return feeds


def _npz(file: str) -> dict[str, np.ndarray]:
    try:
        with np.load(file, allow_pickle=False) as z:
            if not isinstance(z, np.lib.npyio.NpzFile):
                raise InputError(f"'{file}' is not an .npz archive")
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, MemoryError, EOFError) as e:
        raise InputError(f"cannot read inputs from '{file}': {type(e).__name__}: {e}") from None


def safe_file_names(names: list[str]) -> dict[str, str]:
    """A file name (``STEM.npy``) for each output name, safe to create inside one directory:
    characters other than letters, digits and ``._-+=`` become ``_`` (so no ``/``, ``\\``,
    ``..`` path or NUL survives), a leading dot gets a ``_`` before it, long names are cut,
    and names that would collide (letter case aside) get a ``_2``, ``_3`` ... suffix."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        stem = "".join(ch if ch.isalnum() or ch in _SAFE_PUNCTUATION else "_" for ch in name)
        if not stem or stem.startswith("."):
            stem = "_" + stem
        stem = stem[:_MAX_STEM]
        candidate, k = stem, 1
        while candidate.casefold() in taken:
            k += 1
            candidate = f"{stem}_{k}"
        taken.add(candidate.casefold())
        out[name] = f"{candidate}.npy"
    return out


def prepare_output_dir(out_dir: Path, names: list[str]) -> dict[str, Path]:
    """Create `out_dir` and plan one file per output inside it. An existing link or non-file
    where a file would go is refused before anything is written: no file is ever written
    outside `out_dir`, and no link is followed."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create the output directory '{out_dir}': "
                         f"{e.strerror or e}") from None
    if not out_dir.is_dir():
        raise InputError(f"the output directory '{out_dir}' is not a directory")
    files = {}
    for name, file in safe_file_names(names).items():
        path = out_dir / file
        if os.path.lexists(path) and (path.is_symlink() or not path.is_file()):
            what = "a symbolic link" if path.is_symlink() else "not a regular file"
            raise InputError(f"output '{name}': '{path}' is {what}; itergraph does not write "
                             "through it (remove it or choose another --output-dir)")
        files[name] = path
    return files


def write_npy(path: Path, value) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        raise InputError(f"cannot write '{path}': {e.strerror or e}") from None
    with os.fdopen(fd, "wb") as f:
        np.save(f, np.asarray(value), allow_pickle=False)
