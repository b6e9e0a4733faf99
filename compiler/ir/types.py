"""The types of Tile IR.

Types are immutable values compared structurally. `str(t)` gives the short form
used inside cuda_tile assembly (`tile<4xf32>`); `t.full()` gives the form with the
dialect prefix (`!cuda_tile.tile<4xf32>`) used by the generic op syntax.
"""

from __future__ import annotations

from .frozen import Frozen, _set

DYNAMIC = None  # a `?` extent or stride in a tensor_view


class Type(Frozen):
    """A type. Composite types remember their text (`str`) once made: printing a module
    spells the same few types thousands of times."""

    __slots__ = ()

    def full(self) -> str:
        """The type as written outside cuda_tile ops (with its dialect prefix)."""
        return str(self)

    def walk(self):
        """This type and every type nested in it."""
        yield self


class ElementType(Type):
    """An element type of a tile: an integer, a float, or a pointer."""

    __slots__ = ()
    bitwidth: int

    @property
    def is_integer(self) -> bool:
        return False

    @property
    def is_float(self) -> bool:
        return False


class IntegerType(ElementType):
    """A signless integer; signedness comes from the op that uses it."""

    __slots__ = ("width",)
    width: int

    def __init__(self, width: int) -> None:
        _set(self, "width", width)

    def __str__(self) -> str:
        return f"i{self.width}"

    @property
    def bitwidth(self) -> int:  # type: ignore[override]
        return self.width

    @property
    def is_integer(self) -> bool:
        return True


class FloatFormat(Frozen):
    """Bit layout of a floating-point format (IEEE-like or one of the small formats)."""

    __slots__ = (
        "name",
        "width",
        "exponent_bits",
        "mantissa_bits",
        "bias",
        "has_infinity",
        "nan",
        "has_sign",
        "storage_width",
        "since",
    )
    name: str
    width: int
    exponent_bits: int
    mantissa_bits: int
    bias: int
    has_infinity: bool
    # How NaN is encoded: "ieee" (all-ones exponent, non-zero mantissa), "all_ones"
    # (only the all-ones pattern, as in f8E4M3FN and f8E8M0FNU) or "none" (f4E2M1FN).
    nan: str
    has_sign: bool
    storage_width: int  # bits a value occupies in memory (tf32 lives in 32 bits)
    since: str

    def __init__(
        self,
        name: str,
        width: int,
        exponent_bits: int,
        mantissa_bits: int,
        bias: int,
        has_infinity: bool = True,
        nan: str = "ieee",
        has_sign: bool = True,
        storage_width: int = 0,
        since: str = "13.1",
    ) -> None:
        _set(self, "name", name)
        _set(self, "width", width)
        _set(self, "exponent_bits", exponent_bits)
        _set(self, "mantissa_bits", mantissa_bits)
        _set(self, "bias", bias)
        _set(self, "has_infinity", has_infinity)
        _set(self, "nan", nan)
        _set(self, "has_sign", has_sign)
        _set(self, "storage_width", storage_width)
        _set(self, "since", since)


FLOAT_FORMATS: dict[str, FloatFormat] = {
    f.name: f
    for f in (
        FloatFormat("f16", 16, 5, 10, 15, storage_width=16),
        FloatFormat("bf16", 16, 8, 7, 127, storage_width=16),
        FloatFormat("f32", 32, 8, 23, 127, storage_width=32),
        FloatFormat("tf32", 19, 8, 10, 127, storage_width=32),
        FloatFormat("f64", 64, 11, 52, 1023, storage_width=64),
        FloatFormat("f8E4M3FN", 8, 4, 3, 7, has_infinity=False, nan="all_ones", storage_width=8),
        FloatFormat("f8E5M2", 8, 5, 2, 15, storage_width=8),
        FloatFormat(
            "f8E8M0FNU",
            8,
            8,
            0,
            127,
            has_infinity=False,
            nan="all_ones",
            has_sign=False,
            storage_width=8,
            since="13.2",
        ),
        FloatFormat("f4E2M1FN", 4, 2, 1, 1, has_infinity=False, nan="none", storage_width=4, since="13.3"),
    )
}


class FloatType(ElementType):
    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        _set(self, "name", name)

    def __str__(self) -> str:
        return self.name

    @property
    def format(self) -> FloatFormat:
        return FLOAT_FORMATS[self.name]

    @property
    def bitwidth(self) -> int:  # type: ignore[override]
        return FLOAT_FORMATS[self.name].storage_width

    @property
    def is_float(self) -> bool:
        return True


class PointerType(ElementType):
    __slots__ = ("pointee", "_str")
    pointee: Type

    def __init__(self, pointee: Type) -> None:
        _set(self, "pointee", pointee)
        _set(self, "_str", None)

    def __str__(self) -> str:
        text = self._str
        if text is None:
            text = f"ptr<{self.pointee}>"
            _set(self, "_str", text)
        return text

    def full(self) -> str:
        return f"!cuda_tile.{self}"

    @property
    def bitwidth(self) -> int:  # type: ignore[override]
        return 64

    def walk(self):
        yield self
        yield from self.pointee.walk()


class TileType(Type):
    __slots__ = ("shape", "element", "_str")
    shape: tuple[int, ...]
    element: Type

    def __init__(self, shape: tuple[int, ...], element: Type) -> None:
        _set(self, "shape", shape)
        _set(self, "element", element)
        _set(self, "_str", None)

    def __str__(self) -> str:
        text = self._str
        if text is None:
            if not self.shape:
                text = f"tile<{self.element}>"
            else:
                text = f"tile<{'x'.join(map(str, self.shape))}x{self.element}>"
            _set(self, "_str", text)
        return text

    def full(self) -> str:
        return f"!cuda_tile.{self}"

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def with_element(self, element: Type) -> TileType:
        return TileType(self.shape, element)

    def walk(self):
        yield self
        yield from self.element.walk()


class TokenType(Type):
    __slots__ = ()

    def __str__(self) -> str:
        return "token"

    def full(self) -> str:
        return "!cuda_tile.token"


def _dims(values: tuple[int | None, ...]) -> list[str]:
    return ["?" if v is None else str(v) for v in values]


class TensorViewType(Type):
    """A view of global memory: element type, shape and strides, `None` where dynamic."""

    __slots__ = ("element", "shape", "strides", "_str")
    element: Type
    shape: tuple[int | None, ...]
    strides: tuple[int | None, ...]

    def __init__(self, element: Type, shape: tuple[int | None, ...], strides: tuple[int | None, ...]) -> None:
        _set(self, "element", element)
        _set(self, "shape", shape)
        _set(self, "strides", strides)
        _set(self, "_str", None)

    def __str__(self) -> str:
        text = self._str
        if text is None:
            if not self.shape:
                text = f"tensor_view<{self.element}>"
            else:
                dims = "x".join(_dims(self.shape))
                text = f"tensor_view<{dims}x{self.element}, strides=[{','.join(_dims(self.strides))}]>"
            _set(self, "_str", text)
        return text

    def full(self) -> str:
        return f"!cuda_tile.{self}"

    @property
    def rank(self) -> int:
        return len(self.shape)

    def walk(self):
        yield self
        yield from self.element.walk()


def _view_suffix(dim_map: tuple[int, ...]) -> str:
    if dim_map == tuple(range(len(dim_map))):
        return ""
    return f", dim_map=[{', '.join(map(str, dim_map))}]"


def _padding_prefix(padding: str | None) -> str:
    return f"padding_value = {padding}, " if padding else ""


class PartitionViewType(Type):
    """Tiles of `tile_shape` laid edge to edge over a tensor_view."""

    __slots__ = ("tile_shape", "tensor_view", "dim_map", "padding", "_str")
    tile_shape: tuple[int, ...]
    tensor_view: Type
    dim_map: tuple[int, ...]
    padding: str | None  # a PADDING_VALUE keyword

    def __init__(
        self, tile_shape: tuple[int, ...], tensor_view: Type, dim_map: tuple[int, ...], padding: str | None = None
    ) -> None:
        _set(self, "tile_shape", tile_shape)
        _set(self, "tensor_view", tensor_view)
        _set(self, "dim_map", dim_map)
        _set(self, "padding", padding)
        _set(self, "_str", None)

    def __str__(self) -> str:
        text = self._str
        if text is None:
            text = (
                f"partition_view<tile=({'x'.join(map(str, self.tile_shape))}), "
                f"{_padding_prefix(self.padding)}{self.tensor_view}{_view_suffix(self.dim_map)}>"
            )
            _set(self, "_str", text)
        return text

    def full(self) -> str:
        return f"!cuda_tile.{self}"

    def walk(self):
        yield self
        yield from self.tensor_view.walk()


class StridedViewType(Type):
    """Tiles of `tile_shape` placed every `traversal_strides` elements over a tensor_view."""

    __slots__ = ("tile_shape", "traversal_strides", "tensor_view", "dim_map", "padding")
    tile_shape: tuple[int, ...]
    traversal_strides: tuple[int, ...]
    tensor_view: Type
    dim_map: tuple[int, ...]
    padding: str | None

    def __init__(
        self,
        tile_shape: tuple[int, ...],
        traversal_strides: tuple[int, ...],
        tensor_view: Type,
        dim_map: tuple[int, ...],
        padding: str | None = None,
    ) -> None:
        _set(self, "tile_shape", tile_shape)
        _set(self, "traversal_strides", traversal_strides)
        _set(self, "tensor_view", tensor_view)
        _set(self, "dim_map", dim_map)
        _set(self, "padding", padding)

    def __str__(self) -> str:
        return (
            f"strided_view<tile=({'x'.join(map(str, self.tile_shape))}), "
            f"traversal_strides=[{','.join(map(str, self.traversal_strides))}], "
            f"{_padding_prefix(self.padding)}{self.tensor_view}{_view_suffix(self.dim_map)}>"
        )

    def full(self) -> str:
        return f"!cuda_tile.{self}"

    def walk(self):
        yield self
        yield from self.tensor_view.walk()


class GatherScatterViewType(Type):
    """Rows (along `sparse_dim`) picked by an index tile, full tiles along the other dims."""

    __slots__ = ("tile_shape", "tensor_view", "sparse_dim", "padding")
    tile_shape: tuple[int, ...]
    tensor_view: Type
    sparse_dim: int
    padding: str | None

    def __init__(
        self, tile_shape: tuple[int, ...], tensor_view: Type, sparse_dim: int, padding: str | None = None
    ) -> None:
        _set(self, "tile_shape", tile_shape)
        _set(self, "tensor_view", tensor_view)
        _set(self, "sparse_dim", sparse_dim)
        _set(self, "padding", padding)

    def __str__(self) -> str:
        return (
            f"gather_scatter_view<tile=({'x'.join(map(str, self.tile_shape))}), "
            f"{_padding_prefix(self.padding)}{self.tensor_view}, sparse_dim={self.sparse_dim}>"
        )

    def full(self) -> str:
        return f"!cuda_tile.{self}"

    def walk(self):
        yield self
        yield from self.tensor_view.walk()


VIEW_TYPES = (PartitionViewType, StridedViewType, GatherScatterViewType)


class FunctionType(Type):
    __slots__ = ("inputs", "results")
    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __init__(self, inputs: tuple[Type, ...], results: tuple[Type, ...]) -> None:
        _set(self, "inputs", inputs)
        _set(self, "results", results)

    def __str__(self) -> str:
        ins = ", ".join(t.full() for t in self.inputs)
        if len(self.results) == 1 and not isinstance(self.results[0], FunctionType):
            return f"({ins}) -> {self.results[0].full()}"
        return f"({ins}) -> ({', '.join(t.full() for t in self.results)})"

    def walk(self):
        yield self
        for t in self.inputs + self.results:
            yield from t.walk()


class OpaqueType(Type):
    """A type of another dialect or a builtin type we do not model (`index`, `!test.x`)."""

    __slots__ = ("text",)
    text: str

    def __init__(self, text: str) -> None:
        _set(self, "text", text)

    def __str__(self) -> str:
        return self.text


# Interned singletons for the common element types: the parser hands these out.
I1, I8, I16, I32, I64 = (IntegerType(w) for w in (1, 8, 16, 32, 64))
I4 = IntegerType(4)
TOKEN = TokenType()
FLOAT_TYPES: dict[str, FloatType] = {name: FloatType(name) for name in FLOAT_FORMATS}
INTEGER_TYPES: dict[str, IntegerType] = {str(t): t for t in (I1, I4, I8, I16, I32, I64)}
SCALAR_TYPES: dict[str, ElementType] = {**INTEGER_TYPES, **FLOAT_TYPES}
# Version that introduced each element type (all others are 13.1).
ELEMENT_TYPE_SINCE: dict[str, str] = {"i4": "13.3", "f8E8M0FNU": "13.2", "f4E2M1FN": "13.3"}


def element_type(t: Type) -> Type:
    """The element type of a tile (or the type itself for scalars)."""
    return t.element if isinstance(t, TileType) else t


def is_pointer_like(t: Type) -> bool:
    return isinstance(element_type(t), PointerType)


def memory_bits(t: Type) -> int:
    """Bits an element of `t` (a tile type or an element type) occupies in memory: i1 takes a
    byte, i4 and f4E2M1FN half of one, a pointer 64 bits."""
    e = element_type(t)
    if isinstance(e, IntegerType):
        return 8 if e.width == 1 else e.width
    if isinstance(e, FloatType):
        return e.format.storage_width
    return 64
