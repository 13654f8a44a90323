"""`Transform`: a user-facing name for a pass, with an optional argument (``unroll=4``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import InputError
from ..passes.base import Pass


@dataclass(frozen=True)
class Transform:
    """A pass under the name users give it.

    `make(argument)` returns the pass to run: `argument` is the text after ``=`` in
    ``name=argument``, or ``None`` when there is none (then the pass's default). A transform
    whose `argument` is ``None`` takes no argument; otherwise `argument` names what it means
    (``"K"``), and `make` raises `InputError` for a value it cannot use. `summary` is one
    line for listings; the contract is the pass's docstring.
    """

    name: str
    summary: str
    make: Callable[[str | None], Pass]
    argument: str | None = None

    @classmethod
    def of(cls, name: str, summary: str, pass_: Pass) -> Transform:
        """A transform that takes no argument and runs `pass_`."""
        return cls(name, summary, lambda _arg: pass_)

    def build(self, argument: str | None) -> Pass:
        if argument is not None and self.argument is None:
            raise InputError(f"transform '{self.name}' takes no argument (got "
                             f"'{self.name}={argument}')")
        return self.make(argument)

    def contract(self) -> str:
        """The pass's docstring: what it applies to, returns and guarantees."""
        return inspect.cleandoc(type(self.make(None)).__doc__ or "")
