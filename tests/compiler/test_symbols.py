"""Renaming symbols with their uses and debug info (`compiler.ir.symbols`), and the
`tileir opt --test-debuginfo-update-symbol-name` pass built on it."""

from __future__ import annotations

from pathlib import Path

from compiler.cli import main
from compiler.ir.symbols import lookup_symbol_path, rename_symbol
from compiler.text import PrintOptions, parse, print_module

SOURCE = """#file = #cuda_tile.di_file<"k.py" in "/src/">
#cu = #cuda_tile.di_compile_unit<file = #file>
#sp = #cuda_tile.di_subprogram<file = #file, line = 1, name = "k", linkageName = "k", compileUnit = #cu, scopeLine = 2>
#loc = loc("/src/k.py":3:4)
#di = #cuda_tile.di_loc<#loc in #sp>
cuda_tile.module @mod {
  global @g <f32: [1.0, 2.0]> : tile<2xf32>
  entry @k() {
    %p = get_global @g : tile<ptr<f32>>
    %c = constant <i32: 1> : tile<i32> loc(#di)
    return
  } loc(#di)
  entry @other() {
    return
  }
}
"""


def _module():
    result = parse(SOURCE, "k.tileir")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    return result.module


def test_lookup_by_nested_path() -> None:
    module = _module()
    assert lookup_symbol_path(module, ["mod", "k"]).name == "cuda_tile.entry"
    assert lookup_symbol_path(module, ["mod", "g"]).name == "cuda_tile.global"
    assert lookup_symbol_path(module, ["mod", "nope"]) is None
    assert lookup_symbol_path(module, ["k"]) is None


def test_rename_updates_linkage_name_everywhere() -> None:
    module = _module()
    assert rename_symbol(module, lookup_symbol_path(module, ["mod", "k"]), "k_f32") is None
    text = print_module(module, PrintOptions(debuginfo=True))
    assert "entry @k_f32()" in text
    assert 'name = "k", linkageName = "k_f32"' in text
    assert 'linkageName = "k"' not in text  # the constant's location shares the subprogram


def test_rename_with_uses() -> None:
    module = _module()
    rename_symbol(module, lookup_symbol_path(module, ["mod", "g"]), "weights", update_uses=True)
    text = print_module(module)
    assert "global @weights" in text and "get_global @weights" in text and "@g " not in text


def test_rename_without_uses_leaves_references() -> None:
    module = _module()
    rename_symbol(module, lookup_symbol_path(module, ["mod", "g"]), "weights")
    assert "get_global @g " in print_module(module)


def test_scope_must_enclose_the_symbol() -> None:
    module = _module()
    target = lookup_symbol_path(module, ["mod", "k"])
    scope = lookup_symbol_path(module, ["mod", "other"])
    problem = rename_symbol(module, target, "x", scope=scope)
    assert problem is not None and problem.code == "rename-scope"
    assert "did not enclose the symbol itself" in problem.message
    assert problem.location()[1] == 8 and problem.related[0].message == "scope defined here"
    assert "entry @k()" in print_module(module)  # nothing changed


def test_opt_pass(tmp_path: Path, capsys) -> None:
    path = tmp_path / "k.tileir"
    path.write_text(SOURCE)
    spec = "symbol-to-rename=mod::k new-name=k2 update-uses=true"
    assert main(["opt", f"--test-debuginfo-update-symbol-name={spec}", "--mlir-print-debuginfo", str(path)]) == 0
    out = capsys.readouterr().out
    assert "entry @k2()" in out and 'linkageName = "k2"' in out


def test_opt_pass_bad_options_are_one_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "k.tileir"
    path.write_text(SOURCE)
    for spec in ("new-name=x", "symbol-to-rename=mod::k", "bogus=1 new-name=x symbol-to-rename=a"):
        assert main(["opt", f"--test-debuginfo-update-symbol-name={spec}", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--test-debuginfo-update-symbol-name" in err
    assert main(["opt", "--test-debuginfo-update-symbol-name=symbol-to-rename=mod::zz new-name=x", str(path)]) == 1
    assert "could not find symbol op with name '@mod::@zz'" in capsys.readouterr().err
