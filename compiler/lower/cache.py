"""The disk cache of compiled kernels: where it is, how large it may grow, and trimming it.

    $TILEIR_CACHE_DIR, else $XDG_CACHE_HOME/tileir, else ~/.cache/tileir:
        kernels/KEY/           our compiles (compiler.lower.build): cubin, PTX, ..., meta.json
        source/NAME_HASH.py    generated Triton modules (Triton's jit imports a file)
        tileiras/KEY/          NVIDIA tileiras' cubins (compiler.runtime.tileiras);
        tileiras/index/K.json  and what became of each input, whatever the tileiras version

Bounded by $TILEIR_CACHE_SIZE (default 2G; a number of bytes with an optional K, M or G,
powers of 1024; 0: no bound). The items are the entries and files of those directories. A hit
marks its item used (its modification time); after a store, at most once every
TRIM_INTERVAL seconds per cache (a stamp file says when), the items' sizes are summed and,
past the bound, the least recently used are removed until the cache holds at most TRIM_TO
of it. Removing an item another process is reading makes that read a miss, never a wrong
result: every entry lists its files' SHA-256s. `tileir cache` shows the cache and clears or
trims it on demand.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .codegen import LowerError

DEFAULT_SIZE = 2 << 30
TRIM_INTERVAL = 600.0  # seconds between size checks after stores: a check lists every item
TRIM_TO = 0.9  # a trim leaves room, so that the next stores do not trim again at once
DEBRIS_AGE = 3600.0  # a store's temporary directory older than this was left by a killed process
STAMP = ".trimmed"

# (the directory under the cache, what its items are): the cache's areas, in display order.
AREAS = (
    ("kernels", "our compiles (tileir compile, the triton backend)"),
    ("source", "generated Triton source"),
    ("tileiras", "NVIDIA tileiras' cubins"),
    ("tileiras/index", "tileiras' index (the newest cubin of each input)"),
)
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)(?:i?B)?\s*\Z", re.IGNORECASE)


def cache_dir() -> Path:
    env = os.environ.get("TILEIR_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg or Path.home() / ".cache") / "tileir"


def origin() -> str:
    """Where cache_dir() came from, for messages: " (from $TILEIR_CACHE_DIR)" or ""."""
    name = next((n for n in ("TILEIR_CACHE_DIR", "XDG_CACHE_HOME") if os.environ.get(n)), "")
    return f" (from ${name})" if name else ""


def cache_root() -> Path:
    """`cache_dir()`, made if missing; a LowerError naming it and what to do where it cannot
    be used (a file's path, no write permission; or a TILEIR_CACHE_SIZE that is no size):
    every compile writes its generated source there, cached or not."""
    size_limit()
    root = cache_dir()
    try:
        if root.exists() and not root.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "it is not a directory")
        root.mkdir(parents=True, exist_ok=True)
        if not os.access(root, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "no permission to write there")
    except OSError as exc:
        raise LowerError(
            f"the compile cache {root}{origin()} cannot be used: "
            f"{exc.strerror or exc}; set TILEIR_CACHE_DIR to a writable directory"
        ) from None
    return root


def parse_size(text: str) -> int | None:
    """Bytes of "2G", "500M", "64k", "1.5G", "123456" (K, M, G: powers of 1024), else None."""
    m = _SIZE.match(text)
    if m is None:
        return None
    return int(float(m.group(1)) * (1 << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]))


def size_limit() -> int:
    """The cache's bound in bytes from $TILEIR_CACHE_SIZE (0: none); a LowerError for a value
    that is no size."""
    text = os.environ.get("TILEIR_CACHE_SIZE", "").strip()
    if not text:
        return DEFAULT_SIZE
    size = parse_size(text)
    if size is None:
        raise LowerError(
            f"TILEIR_CACHE_SIZE={text!r} is not a size: give bytes with an optional K, M or G "
            "(e.g. 2G, 500M), or 0 for no bound"
        )
    return size


def show_size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} B"


def mark_used(path: Path) -> None:
    """Make the item at `path` the most recently used (a hit): trimming removes the least."""
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only cache (one carried to another machine) is still read


@dataclass(frozen=True, slots=True)
class Item:
    path: Path
    area: str
    size: int
    used: float  # the modification time: when it was stored or last hit


def _size(entry: os.DirEntry) -> int:
    """The bytes of a file, or of the files of an entry directory (they hold no directories)."""
    try:
        if not entry.is_dir(follow_symlinks=False):
            return entry.stat(follow_symlinks=False).st_size
        with os.scandir(entry.path) as inner:
            return sum(f.stat(follow_symlinks=False).st_size for f in inner if f.is_file(follow_symlinks=False))
    except OSError:
        return 0  # removed meanwhile


def items(root: Path) -> list[Item]:
    """Every item of the cache at `root` (dot-names, a store or write in progress or left by a
    killed process, are none)."""
    return _scan(root)[0]


def _scan(root: Path) -> tuple[list[Item], list[str]]:
    """(the items, the store temporaries `.tmp-*`/`.old-*` older than DEBRIS_AGE: left by a
    killed process)."""
    now = time.time()
    found: list[Item] = []
    debris: list[str] = []
    nested = {area for area, _ in AREAS}
    for area, _ in AREAS:
        try:
            scan = os.scandir(root / area)
        except OSError:
            continue
        with scan:
            for entry in scan:
                if f"{area}/{entry.name}" in nested:
                    continue
                try:
                    used = entry.stat(follow_symlinks=False).st_mtime
                except OSError:
                    continue
                if not entry.name.startswith("."):
                    found.append(Item(Path(entry.path), area, _size(entry), used))
                elif entry.name.startswith((".tmp-", ".old-")) and now - used > DEBRIS_AGE:
                    debris.append(entry.path)
    return found, debris


def _removable(root: Path) -> list[Item]:
    """The items, after removing the debris of killed stores (what trimming and clearing do)."""
    found, debris = _scan(root)
    for path in debris:
        shutil.rmtree(path, ignore_errors=True)
    return found


def _remove(item: Item) -> bool:
    try:
        if item.path.is_dir() and not item.path.is_symlink():
            shutil.rmtree(item.path)
        else:
            item.path.unlink()
    except FileNotFoundError:
        return False  # another process removed it first
    except OSError:
        return False
    return True


def trim(root: Path, limit: int, to: float = TRIM_TO) -> tuple[int, int]:
    """Remove the least recently used items while the cache holds more than `limit` bytes,
    down to `to` × `limit`; (items removed, bytes removed). A limit of 0 is no bound."""
    found = _removable(root)
    total = sum(i.size for i in found)
    if limit <= 0 or total <= limit:
        return 0, 0
    goal = int(limit * to)
    removed = freed = 0
    for item in sorted(found, key=lambda i: i.used):
        if total - freed <= goal:
            break
        if _remove(item):
            removed += 1
            freed += item.size
    return removed, freed


def clear(root: Path) -> tuple[int, int]:
    """Remove every item; (items removed, bytes removed)."""
    removed = freed = 0
    for item in _removable(root):
        if _remove(item):
            removed += 1
            freed += item.size
    return removed, freed


def stored(root: Path) -> None:
    """After a store: trim the cache if TRIM_INTERVAL has passed since the last check (the
    stamp file's time; the check is a listing of every item)."""
    stamp = root / STAMP
    now = time.time()
    try:
        if now - stamp.stat().st_mtime < TRIM_INTERVAL:
            return
    except OSError:
        pass  # no stamp yet: check now
    try:
        stamp.touch()
        limit = size_limit()
    except (OSError, LowerError):
        return  # a read-only cache is not trimmed; a bad bound was reported by cache_root()
    trim(root, limit)
