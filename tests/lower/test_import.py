"""Importing a generated module (compiler.lower.build.import_kernel): the sources and line numbers
Triton reads through the fast `inspect.getsourcelines` are inspect's own, and Triton's cache key
is taken from the text's digest instead of its walk over the functions' ASTs."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from compiler.lower import build, lower
from compiler.runtime import load_module
from tests.corpus import SHARED_MISSING, conformance_files, example_files, sample_files

triton = pytest.importorskip("triton")
from triton.runtime.jit import JITFunction  # noqa: E402


def _kernels() -> list[Path]:
    return example_files() + sample_files()


def _jitted(fn: JITFunction) -> list[JITFunction]:
    module = inspect.getmodule(fn.fn)
    return [v for v in vars(module).values() if isinstance(v, JITFunction)]


@pytest.mark.parametrize("path", _kernels(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_triton_reads_what_inspect_reads(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every jitted function of every example's and sample's generated module: the source
    lines and first line Triton was given (our spans) are what `inspect.getsourcelines`
    (restored, tokenizing) answers now, and each was answered from the spans."""
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    module = load_module(path)
    for entry in module.entries():
        src = lower(module, entry, "sm_90")
        fn = build.import_kernel(src)
        functions = _jitted(fn)
        assert len(functions) >= 1
        lines = src.text.splitlines(keepends=True)
        spans = build.function_spans(ast.parse(src.text), lines)
        for f in functions:
            assert (f.raw_src, f.starting_line_number) == inspect.getsourcelines(f.fn), f.__name__
            assert f.fn.__code__.co_firstlineno in spans, f.__name__


def test_triton_reads_what_inspect_reads_in_the_conformance_kernels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for every kernel of the conformance files that load whole (288 functions of
    133 kernels when this was written)."""
    from compiler.modules import LaunchError

    files = conformance_files()
    if not files:
        pytest.skip(SHARED_MISSING)
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    checked = 0
    for path in files:
        try:
            module = load_module(path)
        except LaunchError:  # (files of split inputs: invalid ones, or several modules of one name)
            continue
        for entry in module.entries():
            for f in _jitted(build.import_kernel(lower(module, entry, "sm_90"))):
                assert (f.raw_src, f.starting_line_number) == inspect.getsourcelines(f.fn), (path.name, f.__name__)
                checked += 1
    assert checked > 200


def test_spans_leave_out_what_the_tree_cannot_tell(tmp_path: Path) -> None:
    """A function followed by a comment line gets no span (inspect takes such a line in when it
    is indented at least as deep as the body, which the tree does not show); for the others
    the spans are inspect's answers, multi-line expressions and strings included."""
    text = (
        "def deco(fn):\n"
        "    return fn\n\n\n"
        "@deco\n"
        "def f(x):\n"
        "    y = x + 1\n"
        "    return (y +\n"
        "            2)\n"
        "    # a comment inspect counts into f\n\n\n"
        "@deco\n"
        "def g(x):\n"
        "    s = '''\n"
        "not code'''\n"
        "    return x\n"
        "# a comment at column 0\n"
        "@deco\n"
        "def h(x):\n"
        "    s = '''\n"
        "def not_code():'''\n"
        "    return x\n"
    )
    path = tmp_path / "probe.py"
    path.write_text(text)
    lines = text.splitlines(keepends=True)
    spans = build.function_spans(ast.parse(text), lines)
    namespace: dict = {}
    exec(compile(text, str(path), "exec"), namespace)  # noqa: S102 - the probe above
    f, g, h = namespace["f"], namespace["g"], namespace["h"]
    assert f.__code__.co_firstlineno not in spans and g.__code__.co_firstlineno not in spans
    block, first = inspect.getsourcelines(f)
    assert first == 5 and block[-1].strip() == "# a comment inspect counts into f"
    start, end = spans[h.__code__.co_firstlineno]
    assert (lines[start - 1 : end], start) == inspect.getsourcelines(h) and end - start == 4
    assert spans[namespace["deco"].__code__.co_firstlineno] == (1, 2)


def test_the_cache_key_is_the_digest_of_the_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton's key of a jitted function is set from the module text, and Triton's own walk
    (DependenciesFinder) does not run in a compile: a Triton that computed it anyway would fail
    this, and the ~9 ms it costs a softmax would be back."""
    from triton.runtime import jit

    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    vadd = next(p for p in example_files() if p.name == "vector_add.tileir")
    module = load_module(vadd)
    src = lower(module, None, "sm_90")
    fn = build.import_kernel(src)
    keys = {f.__name__: f.hash for f in _jitted(fn)}
    assert all(isinstance(k, str) and len(k) == 64 for k in keys.values())
    assert len(set(keys.values())) == len(keys)  # one per function

    def no_walk(*args: object, **kwargs: object) -> None:
        raise AssertionError("Triton walked a function's AST for its cache key")

    monkeypatch.setattr(jit.DependenciesFinder, "visit", no_walk)
    compiled = build.compile_source(src, use_cache=False)
    assert compiled.cubin[:4] == b"\x7fELF"
    # Another text (one constant changed): other keys, for every function
    other = src.text.replace("x + y", "y + x", 1)
    assert other != src.text
    changed = build.import_kernel(type(src)(**{**vars_of(src), "text": other}))
    assert not set(keys.values()) & {f.hash for f in _jitted(changed)}


def vars_of(src: object) -> dict:
    import dataclasses

    return {f.name: getattr(src, f.name) for f in dataclasses.fields(src)}  # type: ignore[arg-type]
