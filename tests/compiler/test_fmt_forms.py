"""`tileir fmt` keeps a file's form: every accepted input form prints as a fixed point of
`fmt`, in the form it was written.

* a plain `cuda_tile.module` stays plain;
* the frontend contract's wrapper (`module attributes {...} { ... }`, spec 002) prints as MLIR
  prints `builtin.module`: `module attributes {...} {`, then the pretty form inside (it used
  to come out in the generic form, so `fmt -i` rewrote users' files);
* comments stay where they were;
* generic-form input is the exception: it becomes the pretty form, as MLIR's printer makes it.

Inputs: our examples, `../shared/samples` and a few of NVIDIA's conformance files (both skip
when `../shared` is absent), each also wrapped, and also printed generically."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import cli
from compiler.text import PrintOptions, parse, print_module
from compiler.text.parser import ParseOptions
from tests.corpus import CONFORMANCE_DIR, SHARED_MISSING, example_files, read, sample_files

# Conformance files in the pretty form, with `// RUN:`/`// CHECK:` comments throughout;
# canonicalize.mlir also holds `module { ... }` wrappers between `// -----` separators.
CONFORMANCE = (
    "arith.mlir",
    "ops.mlir",
    "types.mlir",
    "syntax_omit_dialect_prefix.mlir",
    "memory_consistency_ops.mlir",
    "canonicalize.mlir",
)

CONTRACT = "module attributes {nv_tileaa.compute_capability = 90 : i32, tt.num_warps = 4 : i32} {\n"

# Written by hand in the form MLIR prints, comments in every place a comment can be.
WRAPPED = """// RUN: tileir fmt %s
// The frontend contract's wrapper, with comments everywhere.
module attributes {nv_tileaa.compute_capability = 90 : i32, tt.num_warps = 4 : i32} {
  // before the module
  cuda_tile.module @m {
    // before the kernel
    entry @k(%a: tile<ptr<f32>>) {
      %c = constant <f32: 1.000000e+00> : tile<f32> // trailing
      // before return
      return
    }
    // end of module
  }
  // end of wrapper
}
// after everything
"""


def _inputs() -> list:
    files = [*example_files(), *sample_files()]
    files += [CONFORMANCE_DIR / name for name in CONFORMANCE if (CONFORMANCE_DIR / name).is_file()]
    params = [pytest.param(f, id=f"{f.parent.name}/{f.name}") for f in files]
    if not sample_files():
        params.append(pytest.param(None, marks=pytest.mark.skip(reason=SHARED_MISSING), id="shared-absent"))
    return params


def _parse(text: str, name: str, allow_unregistered: bool = False):
    result = parse(text, name, ParseOptions(allow_unregistered=allow_unregistered))
    errors = [d.format(with_snippet=True) for d in result.diagnostics if d.is_error]
    assert not errors, f"{name} does not parse:\n" + "\n".join(errors[:3])
    return result.module


def fmt(text: str, name: str = "<input>", allow_unregistered: bool = False) -> str:
    """What `tileir fmt` prints (the CLI's own options: comments kept)."""
    return print_module(_parse(text, name, allow_unregistered), PrintOptions(keep_comments=True))


def generic(text: str, name: str = "<input>") -> str:
    return print_module(_parse(text, name), PrintOptions(generic=True, keep_comments=True))


def wrap(text: str) -> str:
    """`text` inside the frontend contract's wrapper, indented as MLIR's printer indents it."""
    body = "".join("  " + line if line.strip() else line for line in text.splitlines(True))
    return CONTRACT + body + "}\n"


def _comment_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("//")]


@pytest.mark.parametrize("path", _inputs())
def test_plain_form_is_a_fixed_point_and_stays_pretty(path: Path) -> None:
    source = read(path)
    once = fmt(source, str(path))
    assert fmt(once, f"{path.name} (formatted)") == once, "fmt is not a fixed point"
    assert '"cuda_tile.' not in once and '"builtin.module"' not in once, "fmt printed the generic form"
    # Every comment line of the source is still there, in order.
    kept = _comment_lines(once)
    assert [c for c in _comment_lines(source) if c in kept] == _comment_lines(source)
    # A `module { ... }` wrapper in the source is still one after fmt.
    assert once.count("\nmodule {") + once.startswith("module {") == source.count("\nmodule {") + source.startswith(
        "module {"
    )


@pytest.mark.parametrize("path", _inputs())
def test_wrapped_form_keeps_its_form(path: Path) -> None:
    """The contract's wrapper around a canonical file: fmt leaves it exactly as it is."""
    wrapped = wrap(fmt(read(path), str(path)))
    assert fmt(wrapped, f"{path.name} (wrapped)") == wrapped


@pytest.mark.parametrize("path", _inputs())
def test_generic_form_becomes_the_pretty_form(path: Path) -> None:
    canonical = fmt(read(path), str(path))
    text = generic(canonical, path.name)
    assert '"cuda_tile.' in text  # really the generic form
    assert fmt(text, f"{path.name} (generic)") == canonical
    wrapped = generic(wrap(canonical), f"{path.name} (wrapped)")
    assert wrapped.startswith('"builtin.module"() ({')
    assert fmt(wrapped, f"{path.name} (wrapped, generic)") == wrap(canonical)


def test_generic_wrapper_parses_without_allow_unregistered() -> None:
    fmt(generic(WRAPPED))


def test_the_wrapper_with_comments_prints_as_written() -> None:
    assert fmt(WRAPPED) == WRAPPED
    module = _parse(fmt(WRAPPED), "printed")
    (wrapper,) = module.body.ops
    assert wrapper.name == "builtin.module"
    assert dict(wrapper.attributes)["tt.num_warps"] is not None
    assert [op.name for op in wrapper.regions[0].blocks[0].ops] == ["cuda_tile.module"]


@pytest.mark.parametrize(
    "text",
    [
        "module {\n}\n",
        "module attributes {tt.num_warps = 4 : i32} {\n}\n",
        # A named wrapper keeps its full name: `module @outer` would read back as a cuda_tile.module.
        "builtin.module @outer attributes {tt.num_warps = 4 : i32} {\n  cuda_tile.module @m {\n  }\n}\n",
        # Wrappers nest, as in MLIR.
        "module {\n  module attributes {tt.num_ctas = 2 : i32} {\n    cuda_tile.module @m {\n    }\n  }\n}\n",
    ],
)
def test_wrapper_shapes_are_fixed_points(text: str) -> None:
    assert fmt(text) == text
    top = _parse(text, "t").body.ops[0]
    assert top.name == "builtin.module" and _parse(fmt(text), "t").body.ops[0].name == "builtin.module"


def test_fmt_command_leaves_a_wrapped_file_alone(tmp_path: Path, capsys) -> None:
    f = tmp_path / "wrapped.tileir"
    f.write_text(WRAPPED)
    assert cli.main(["fmt", "--check", str(f)]) == 0
    assert cli.main(["fmt", "-i", str(f)]) == 0
    assert f.read_text() == WRAPPED
    assert cli.main(["fmt", str(f)]) == 0
    assert capsys.readouterr().out == WRAPPED


def test_opt_prints_the_wrapper_in_the_pretty_form(tmp_path: Path, capsys) -> None:
    f = tmp_path / "wrapped.tileir"
    f.write_text(WRAPPED)
    assert cli.main(["opt", str(f)]) == 0
    out = capsys.readouterr().out
    # cuda-tile-opt drops comments; the rest is what was written.
    without_comments = [line.split(" //")[0] for line in WRAPPED.splitlines() if not line.strip().startswith("//")]
    assert out.splitlines() == without_comments
