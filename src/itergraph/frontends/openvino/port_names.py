"""A port's ``names`` attribute: the tensor's names, as OpenVINO writes and reads them.

Names are separated by commas; a comma inside a name is written ``\\,`` (nothing else is
escaped); empty names are dropped and nothing is trimmed (`` a`` and ``a `` are names of their
own), as in OpenVINO's IR reader.
"""

from __future__ import annotations

import re

_SEPARATOR = re.compile(r"(?<!\\),")


def split_names(text: str | None) -> tuple[str, ...]:
    """The names a ``names`` attribute holds, in order."""
    return tuple(n.replace("\\,", ",") for n in _SEPARATOR.split(text or "") if n)


def join_names(names) -> str:
    """The ``names`` attribute of `names`."""
    return ",".join(n.replace(",", "\\,") for n in names)
