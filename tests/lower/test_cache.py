"""The compile cache's bound (compiler.lower.cache): sizes, least-recently-used trimming, the
check after stores, hits marking their entries used, and `tileir cache`; and the scratch
directories of Triton's own cache (compiler.lower.build.scratch_dir)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from compiler import cli
from compiler.lower import LowerError, build, cache
from compiler.lower.build import write_source
from compiler.runtime import load_module
from tests.corpus import REPO

VADD = str(REPO / "examples" / "vector_add.tileir")
HOUR = 3600.0


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("2G", 2 << 30),
        ("500M", 500 << 20),
        ("64k", 64 << 10),
        ("1.5G", 3 << 29),
        ("123", 123),
        ("0", 0),
        (" 10 MiB ", 10 << 20),
        ("1GB", 1 << 30),
        ("abc", None),
        ("-1", None),
        ("1T", None),
        ("", None),
        ("G", None),
    ],
)
def test_sizes(text: str, size: int | None) -> None:
    assert cache.parse_size(text) == size


def test_the_bound_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TILEIR_CACHE_SIZE", raising=False)
    assert cache.size_limit() == cache.DEFAULT_SIZE == 2 << 30
    monkeypatch.setenv("TILEIR_CACHE_SIZE", "300M")
    assert cache.size_limit() == 300 << 20
    monkeypatch.setenv("TILEIR_CACHE_SIZE", "lots")
    with pytest.raises(cache.LowerError, match=r"TILEIR_CACHE_SIZE='lots' is not a size: .* or 0 for no bound"):
        cache.size_limit()


def _item(path: Path, size: int, age: float, *, directory: bool = True) -> Path:
    """An entry directory of two files (or a file) of `size` bytes in all, last used `age` s ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if directory:
        path.mkdir()
        (path / "kernel.cubin").write_bytes(b"c" * (size - size // 4))
        (path / "meta.json").write_bytes(b"m" * (size // 4))
    else:
        path.write_bytes(b"s" * size)
    when = time.time() - age
    os.utime(path, (when, when))
    return path


def _fill(root: Path) -> dict[str, Path]:
    """One item of each area, 1000 bytes each, the oldest first in this order."""
    return {
        "old kernel": _item(root / "kernels" / ("a" * 32), 1000, 50 * HOUR),
        "old source": _item(root / "source" / "k_0123.py", 1000, 40 * HOUR, directory=False),
        "tileiras": _item(root / "tileiras" / ("b" * 32), 1000, 30 * HOUR),
        "index": _item(root / "tileiras" / "index" / ("c" * 32 + ".json"), 1000, 20 * HOUR, directory=False),
        "new source": _item(root / "source" / "k_4567.py", 1000, 10 * HOUR, directory=False),
        "new kernel": _item(root / "kernels" / ("d" * 32), 1000, 1 * HOUR),
    }


def test_items_are_the_entries_of_every_area(tmp_path: Path) -> None:
    made = _fill(tmp_path)
    found = {i.path: i for i in cache.items(tmp_path)}
    assert set(found) == set(made.values())
    assert all(i.size == 1000 for i in found.values())
    assert found[made["index"]].area == "tileiras/index" and found[made["tileiras"]].area == "tileiras"
    assert tmp_path / "tileiras" / "index" not in found  # a directory of items, not one


def test_trim_removes_the_least_recently_used_down_to_nine_tenths(tmp_path: Path) -> None:
    made = _fill(tmp_path)
    assert cache.trim(tmp_path, 6000) == (0, 0)  # within the bound: nothing
    assert cache.trim(tmp_path, 0) == (0, 0)  # 0: no bound
    assert cache.trim(tmp_path, 5000) == (2, 2000)  # to at most 4500 bytes: the two oldest go
    left = {i.path for i in cache.items(tmp_path)}
    assert left == {made[k] for k in ("tileiras", "index", "new source", "new kernel")}
    assert not made["old kernel"].exists() and not made["old source"].exists()


def test_a_hit_makes_an_entry_the_most_recently_used(tmp_path: Path) -> None:
    made = _fill(tmp_path)
    cache.mark_used(made["old kernel"])
    cache.trim(tmp_path, 2000)  # to at most 1800 bytes: one item is left
    assert [i.path for i in cache.items(tmp_path)] == [made["old kernel"]]


def test_debris_of_killed_stores_is_removed_and_work_in_progress_left(tmp_path: Path) -> None:
    old = _item(tmp_path / "kernels" / ".tmp-killed", 100, 2 * HOUR)
    young = _item(tmp_path / "kernels" / ".tmp-storing", 100, 1.0)
    writing = _item(tmp_path / "source" / ".k.py.tileir1.abcdefgh.tmp", 100, 2 * HOUR, directory=False)
    assert cache.items(tmp_path) == []
    assert old.exists()  # showing the cache removes nothing
    assert cache.clear(tmp_path) == (0, 0)
    assert not old.exists() and young.exists() and writing.exists()


def test_stores_trim_at_most_once_an_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = _fill(tmp_path)
    monkeypatch.setenv("TILEIR_CACHE_SIZE", "5000")
    cache.stored(tmp_path)  # no stamp yet: checked now
    assert not made["old kernel"].exists() and made["tileiras"].exists()
    assert len(cache.items(tmp_path)) == 4
    monkeypatch.setenv("TILEIR_CACHE_SIZE", "2000")
    cache.stored(tmp_path)  # checked a moment ago: not again
    assert len(cache.items(tmp_path)) == 4
    past = time.time() - cache.TRIM_INTERVAL - 1
    os.utime(tmp_path / cache.STAMP, (past, past))
    cache.stored(tmp_path)
    assert [i.path for i in cache.items(tmp_path)] == [made["new kernel"]]


def test_clear_removes_every_item(tmp_path: Path) -> None:
    _fill(tmp_path)
    assert cache.clear(tmp_path) == (6, 6000)
    assert cache.items(tmp_path) == [] and (tmp_path / "kernels").is_dir()


def test_a_compile_hit_marks_its_entry_and_source_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the real compile path: a stale entry and source file become the newest items
    when they are hit, so a trim removes others first."""
    pytest.importorskip("triton")
    from compiler.lower import compile as lower_compile

    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    # A file of its own: the generated source names it, so this process's import of that source
    # (from this cache, kept for the process) is no other test's.
    probe = tmp_path / "cache_probe.tileir"
    probe.write_text(Path(VADD).read_text())
    module = load_module(probe)
    first = lower_compile(module, "vector_add", arch="sm_90")
    assert not first.cached
    (entry,) = (tmp_path / "kernels").iterdir()
    (source,) = (tmp_path / "source").iterdir()
    past = time.time() - 100 * HOUR
    for path in (entry, source):
        os.utime(path, (past, past))
    write_source(first.source, tmp_path / "source")  # as an import of the same source does
    assert lower_compile(module, "vector_add", arch="sm_90").cached
    assert entry.stat().st_mtime > past + HOUR and source.stat().st_mtime > past + HOUR
    assert (tmp_path / cache.STAMP).exists()  # the store checked the bound


def test_an_entry_stored_before_ptxas_was_asked_counts_its_spills_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry without `spills_by` counted any stack frame with LDL/STL as spills, libdevice's
    local arrays too (sinf: 32 B under Triton 3.6): read back, its spills are counted as a
    compile counts them now; an entry that says how it counted is taken as it is."""
    pytest.importorskip("triton")
    import json

    from compiler.lower import compile as lower_compile
    from compiler.lower.build import SPILLS_BY

    from .harness import kernel_text

    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    module = load_module(kernel_text([("a", "f32")], [("r", "f32")], ["%r_r = sin %a : tile<32xf32>"], (32,)))
    assert lower_compile(module, "k", arch="sm_90").spills == 0
    (entry,) = (tmp_path / "kernels").iterdir()
    meta = json.loads((entry / "meta.json").read_text())
    assert meta["spills_by"] == SPILLS_BY
    (entry / "meta.json").write_text(json.dumps({**meta, "spills": 32, "spills_by": None}))
    hit = lower_compile(module, "k", arch="sm_90")
    assert hit.cached and hit.spills == 0
    recounted = json.loads((entry / "meta.json").read_text())  # once: the entry keeps the count
    assert (recounted["spills"], recounted["spills_by"]) == (0, SPILLS_BY)
    (entry / "meta.json").write_text(json.dumps({**meta, "spills": 32}))
    assert lower_compile(module, "k", arch="sm_90").spills == 32


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def test_tileir_cache_shows_trims_and_clears(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TILEIR_CACHE_SIZE", raising=False)
    _fill(tmp_path)
    status, out, _ = _cli(capsys, "cache")
    lines = out.splitlines()
    assert status == 0 and lines[0] == f"compile cache: {tmp_path} (from $TILEIR_CACHE_DIR)"
    assert lines[1].split()[:5] == ["kernels", "2", "entries", "2.0", "KiB"]
    assert [ln.split()[0] for ln in lines[1:]] == ["kernels", "source", "tileiras", "tileiras/index", "total"]
    assert lines[3].split()[1:3] == ["1", "entry"]
    assert lines[5].split()[1:5] == ["6", "entries", "5.9", "KiB"] and "of 2.0 GiB (TILEIR_CACHE_SIZE)" in lines[5]
    status, out, _ = _cli(capsys, "cache", "--trim", "3000")
    assert (status, out) == (0, f"removed 4 entries (3.9 KiB) from {tmp_path}\n")
    status, out, _ = _cli(capsys, "cache", "--clear")
    assert (status, out) == (0, f"removed 2 entries (2.0 KiB) from {tmp_path}\n")
    status, _, err = _cli(capsys, "cache", "--trim", "lots")
    assert status == 2 and "--trim lots: not a size" in err


def test_tileir_cache_on_a_cache_not_made_or_not_a_directory(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path / "new"))
    status, out, _ = _cli(capsys, "cache")
    assert status == 0 and out.startswith(f"compile cache: {tmp_path / 'new'} (from $TILEIR_CACHE_DIR) (not made yet)")
    assert not (tmp_path / "new").exists()  # showing makes nothing
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path / "file"))
    status, out, _ = _cli(capsys, "cache")
    assert status == 0 and "(not a directory: it cannot be used)" in out.splitlines()[0]
    status, out, err = _cli(capsys, "cache", "--clear")
    assert status == 2 and out == "" and "it is not a directory; set TILEIR_CACHE_DIR" in err


def test_a_bound_that_is_no_size_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEIR_CACHE_SIZE", "lots")
    for argv in (["cache"], ["compile", VADD, "--arch", "sm_90", "-q"]):
        status, out, err = _cli(capsys, *argv)
        assert status == 2 and out == ""
        assert "TILEIR_CACHE_SIZE='lots' is not a size" in err and len(err.strip().splitlines()) == 1


def test_a_source_in_use_is_written_again_after_a_trim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process keeps the generated module it imported; the file its compiled code's line
    information names is written again (or marked used) each time the process uses it."""
    pytest.importorskip("triton")
    from compiler.lower import lower
    from compiler.lower.build import import_kernel

    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    probe = tmp_path / "source_probe.tileir"
    probe.write_text(Path(VADD).read_text())
    module = load_module(probe)
    src = lower(module, module.entries()[0], "sm_90")
    fn = import_kernel(src)
    (path,) = (tmp_path / "source").iterdir()
    size = path.stat().st_size
    assert cache.clear(tmp_path) == (1, size)
    assert not path.exists()
    assert import_kernel(src) is fn and path.read_text() == src.text


# -- Triton's scratch directories ------------------------------------------------------------


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_scratch_directories_left_behind_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scratch directory whose process is gone and that nobody touched for an hour (a
    process killed outright, a compile on a thread interrupted) is removed when the next one is
    made; one of a live process, a recent one (a process of another PID namespace may still
    use it) and other names stay; looked for at most once a minute."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # (gettempdir reads TMPDIR again)
    monkeypatch.setattr(build, "_swept_at", float("-inf"))
    dead = _dead_pid()
    old = time.time() - build.SCRATCH_STALE - 60
    gone, live, other = (
        tmp_path / f"tileir-scratch-{pid}" for pid in (f"{dead}-ab_d1234", f"{os.getpid()}-abcd1234", f"{dead}-x")
    )
    for d in (gone, live, other):
        (d / "KEY").mkdir(parents=True)
        (d / "KEY" / "k.ttir").write_text("module {}")
        os.utime(d, (old, old))
    recent = tmp_path / f"tileir-scratch-{dead}-efgh5678"
    recent.mkdir()
    half = time.time() - build.SCRATCH_STALE / 2
    os.utime(recent, (half, half))
    made = Path(build.scratch_dir())
    assert made.parent == tmp_path and made.name.startswith(f"tileir-scratch-{os.getpid()}-") and made.is_dir()
    assert not gone.exists() and live.exists() and recent.exists() and other.exists()
    gone.mkdir()
    os.utime(gone, (old, old))
    build.scratch_dir()
    assert gone.exists()  # (within the minute)
    monkeypatch.setattr(build, "_swept_at", time.monotonic() - build.SWEEP_EVERY - 1)
    build.scratch_dir()
    assert not gone.exists()


def test_where_no_scratch_directory_can_be_made_the_error_says_where_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))  # (as TMPDIR on a full disk would)
    with pytest.raises(LowerError) as caught:
        build.scratch_dir()
    assert str(caught.value) == (
        f"error: cannot make a scratch directory for Triton in {tmp_path / 'missing'}: No such file or directory; "
        "set TMPDIR to a writable directory"
    )


def test_a_compile_on_a_thread_past_its_limit_removes_its_scratch_directory_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compile on a thread (the language server's, the notebook's) that outlives its limit
    goes on after the caller removed its scratch directory, and Triton makes it again for its
    next file: the compile removes it too when it ends (two of three were left before)."""
    from compiler.lower import compile as lower_compile

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setenv("TILEIR_COMPILE_TIMEOUT", "0.000001")
    (tmp_path / "tmp").mkdir()
    for _ in range(3):
        with pytest.raises(LowerError, match="did not finish compiling"):
            lower_compile(Path(VADD).read_text(), None, "sm_90", use_cache=False)
    deadline = time.monotonic() + 60
    while list((tmp_path / "tmp").glob("tileir-scratch-*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list((tmp_path / "tmp").glob("tileir-scratch-*")) == []


def test_triton_writes_a_compile_s_files_straight_into_its_scratch_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Triton's cache manager puts each file through a directory of its own, a rename and a
    removal, for a cache that processes share; a scratch directory is one compile's, so the
    files go straight in. A manager the user names (TRITON_CACHE_MANAGER) stays theirs."""
    pytest.importorskip("triton")
    from triton import knobs
    from triton.runtime.cache import FileCacheManager

    from compiler.lower import compile as lower_compile

    put_by_triton: list[str] = []
    triton_put = FileCacheManager.put

    def put(self: FileCacheManager, data: object, filename: str, binary: bool = True) -> str:
        put_by_triton.append(filename)
        return triton_put(self, data, filename, binary)

    monkeypatch.setattr(FileCacheManager, "put", put)
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRITON_CACHE_MANAGER", raising=False)
    compiled = lower_compile(Path(VADD).read_text(), None, "sm_90", use_cache=False)
    assert compiled.cubin.startswith(b"\x7fELF") and put_by_triton == []
    assert knobs.cache.manager_class is None  # (ours only for the compile)

    monkeypatch.setenv("TRITON_CACHE_MANAGER", "triton.runtime.cache:FileCacheManager")
    assert lower_compile(Path(VADD).read_text(), None, "sm_90", use_cache=False).cubin == compiled.cubin
    assert any(name.endswith(".cubin") for name in put_by_triton), put_by_triton
