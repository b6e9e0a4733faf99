"""Immutable value classes that cost nothing to define.

`@dataclass(frozen=True, slots=True)` compiles five or six methods with `exec` for every
class when its module is imported, about a millisecond each: with some seventy such classes
on the way to parsing a file, that was half of every command's start-up. A `Frozen` class
writes its `__init__` (storing fields with `_set`) and lists its fields as `__slots__`; this
base gives it what the dataclass gave, with the same results: equality and hashing by the
tuple of fields (classes must match exactly), a `Name(field=value, ...)` repr,
`FrozenInstanceError` on assignment, copying and pickling, and `replace` (for
`dataclasses.replace`). `__init__` must take the fields, in `__slots__` order. Slots whose
names start with `_` are not fields (a class may keep a cache there).

    class Span(Frozen):
        __slots__ = ("start", "end")

        def __init__(self, start: int, end: int) -> None:
            _set(self, "start", start)
            _set(self, "end", end)
"""

from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from typing import Any, ClassVar

_set = object.__setattr__


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen value (as `dataclasses.FrozenInstanceError`, whose module
    this one does not import: see the module doc)."""


class _Fields:
    """What `Frozen` and `Record` share: the fields are the `__slots__` (all the classes'
    down the hierarchy) not starting with `_`; a `Name(field=value, ...)` repr; `replace`."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__slots__", ())
        if isinstance(own, str):
            own = (own,)
        cls._fields = cls._fields + tuple(name for name in own if not name.startswith("_"))

    def __repr__(self) -> str:
        parts = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({parts})"

    def replace(self, **changes: object) -> Any:
        """A copy with some fields changed (`dataclasses.replace`)."""
        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self)(**values)


class Frozen(_Fields):
    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__eq__" not in cls.__dict__:
            cls.__eq__, cls.__hash__ = _eq_hash(cls._fields)  # type: ignore[method-assign]

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # copy, deepcopy and pickle rebuild through `__init__` (they cannot assign fields).
        return type(self), tuple(getattr(self, name) for name in self._fields)


def _eq_hash(fields: tuple[str, ...]):
    """`__eq__` and `__hash__` over the tuple of `fields`, as a frozen dataclass has them
    (the same hash values too: `hash((a, b))`)."""
    if not fields:

        def __eq__(self, other):  # noqa: N807
            return True if other.__class__ is self.__class__ else NotImplemented

        def __hash__(self):  # noqa: N807
            return hash(())

    elif len(fields) == 1:
        get = attrgetter(fields[0])

        def __eq__(self, other):  # noqa: N807
            if other.__class__ is self.__class__:
                return (get(self),) == (get(other),)
            return NotImplemented

        def __hash__(self):  # noqa: N807
            return hash((get(self),))

    else:
        key = attrgetter(*fields)

        def __eq__(self, other):  # noqa: N807
            if other.__class__ is self.__class__:
                return key(self) == key(other)
            return NotImplemented

        def __hash__(self):  # noqa: N807
            return hash(key(self))

    return __eq__, __hash__


class Record(_Fields):
    """A mutable counterpart of `Frozen` (`@dataclass(slots=True)`): equality by fields,
    unhashable, a `Name(field=value, ...)` repr, `replace`. Fields are the `__slots__`, as
    for `Frozen`."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    __hash__ = None  # type: ignore[assignment]
