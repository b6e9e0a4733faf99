"""Semantics of the shape ops: `broadcast`, `reshape`, `permute`, `cat`, `extract` and `insert`.

Every tile value carries a leading group axis (length G, or 1 when uniform across the
group), so tile dimension `d` is NumPy axis `d + 1`. These ops only move elements:
they never change values, and they keep a uniform input uniform. Where NumPy can
express the result as a view of the input (broadcast, permute, uniform extract,
contiguous reshape) no data is copied; tile values are never written in place, so
sharing memory between values is safe.
"""

from __future__ import annotations

import numpy as np

from ..ir.types import TileType
from . import dtypes
from .registry import Ctx, semantics


def _shape(t: object) -> tuple[int, ...]:
    return tuple(t.shape) if isinstance(t, TileType) else ()


@semantics("broadcast")
def _broadcast(ctx: Ctx) -> np.ndarray:
    source = ctx.args[0]
    target = _shape(ctx.result_type())
    # Only the tile's unit dimensions are stretched; the group axis stays as it is.
    return np.broadcast_to(source, (source.shape[0], *target))


@semantics("reshape")
def _reshape(ctx: Ctx) -> np.ndarray:
    source = ctx.args[0]
    # NumPy's default order is row-major (C), which is the order the op reference defines.
    return source.reshape((source.shape[0], *_shape(ctx.result_type())))


@semantics("permute")
def _permute(ctx: Ctx) -> np.ndarray:
    source = ctx.args[0]
    attr = ctx.attr("permutation")
    perm = tuple(getattr(attr, "values", ()))
    # Result dimension i is source dimension perm[i]: exactly np.transpose's `axes`.
    return np.transpose(source, (0, *(p + 1 for p in perm)))


def _common_group(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """The arrays with their group axes broadcast to one length (a uniform value is
    stretched, without copying, only when another one is not uniform)."""
    g = max(a.shape[0] for a in arrays)
    return [a if a.shape[0] == g else np.broadcast_to(a, (g, *a.shape[1:])) for a in arrays]


@semantics("cat")
def _cat(ctx: Ctx) -> np.ndarray:
    lhs, rhs = _common_group([ctx.args[0], ctx.args[1]])
    dim = int(ctx.int_attr("dim", 0) or 0)
    return np.concatenate((lhs, rhs), axis=dim + 1)


def _slots(ctx: Ctx, indices: list, whole: tuple[int, ...], part: tuple[int, ...], noun: str) -> list[np.ndarray]:
    """`extract`/`insert`'s slice numbers, per block (read as unsigned 32-bit integers, as the
    op says); one out of range is undefined behaviour, reported."""
    slots = [dtypes.as_unsigned(np.asarray(i)).reshape(-1).astype(np.int64) for i in indices]
    for d, slot in enumerate(slots):
        count = whole[d] // part[d]
        bad = slot >= count
        if bad.any():
            first = int(slot[np.flatnonzero(bad)[0]])
            raise ctx.error(
                f"slice index {first} of dimension {d} is out of range: the {noun} extent "
                f"{whole[d]} holds {count} slices of {part[d]} (undefined behaviour)",
                blocks=bad,
            )
    return slots


def _window(slots: list[np.ndarray], part: tuple[int, ...]) -> tuple[slice, ...]:
    """The elements of the chosen slice, where every block chose the same one."""
    return tuple(slice(int(s[0]) * r, (int(s[0]) + 1) * r) for s, r in zip(slots, part, strict=True))


def _split(whole: tuple[int, ...], part: tuple[int, ...]) -> tuple[int, ...]:
    """`whole` as (n0, r0, n1, r1, ...): n_d slices of extent r_d along each dimension."""
    split: list[int] = []
    for w, r in zip(whole, part, strict=True):
        split += [w // r, r]
    return tuple(split)


def _per_block(slots: list[np.ndarray], group_index: np.ndarray) -> tuple:
    """The index of each block's slice in a (G, n0, r0, n1, r1, ...) view (`_split`): advanced
    indices on the group and n axes, which, separated by slices, put their broadcast axis (the
    group) first, giving (G, r0, r1, ...)."""
    g = len(group_index)
    index: list[object] = [group_index]
    for slot in slots:
        index += [np.broadcast_to(slot, (g,)), slice(None)]
    return tuple(index)


@semantics("extract")
def _extract(ctx: Ctx) -> np.ndarray:
    source = ctx.args[0]
    indices = ctx.args_of("indices")
    src_shape = source.shape[1:]
    out_shape = _shape(ctx.result_type())
    if not out_shape:
        return source
    slots = _slots(ctx, indices, src_shape, out_shape, "source")
    if all(s.shape[0] == 1 for s in slots):
        return source[(slice(None), *_window(slots, out_shape))]
    # Blocks extract different slices.
    blocked = source.reshape((source.shape[0], *_split(src_shape, out_shape)))
    g = max(source.shape[0], *(s.shape[0] for s in slots))
    group_index = np.arange(g) if source.shape[0] == g else np.zeros(g, dtype=np.int64)
    return blocked[_per_block(slots, group_index)]


@semantics("insert")
def _insert(ctx: Ctx) -> np.ndarray:
    source, destination = ctx.args[0], ctx.args[1]
    indices = ctx.args_of("indices")
    whole, part = destination.shape[1:], source.shape[1:]
    slots = _slots(ctx, indices, whole, part, "destination")
    g = max(source.shape[0], destination.shape[0], *(s.shape[0] for s in slots))
    out = np.array(np.broadcast_to(destination, (g, *whole)))  # a fresh copy: tiles are values
    if not whole:
        out[...] = source
    elif all(s.shape[0] == 1 for s in slots):
        out[(slice(None), *_window(slots, part))] = source
    else:  # blocks replace different slices: written through extract's view of the copy
        blocked = out.reshape((g, *_split(whole, part)))
        blocked[_per_block(slots, np.arange(g))] = np.broadcast_to(source, (g, *part))
    return out
