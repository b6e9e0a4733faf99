"""The architecture as a rule: no module of a lower layer imports a higher one.

Every import of every module of the project counts, the ones made inside a function (the
core imports lazily) included; only `if TYPE_CHECKING:` blocks, which never run, are left
out. A package may import its own layer and the layers below it; the faces (the command
line, the language server, the notebook, the pygments lexer) sit on the whole core and import
one another only where FACE_USES says so.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.corpus import REPO

# The core, bottom up; the packages of one tuple are one layer (text, verify and bytecode use
# one another's tables: the parser reports a type the verifier's rules refuse, the bytecode
# reader too, and the verifier knows which types each bytecode version can hold).
CORE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("compiler",),  # the package itself: __version__
    ("compiler.ir",),
    ("compiler.dialect",),
    ("compiler.layout",),
    ("compiler.text", "compiler.verify", "compiler.bytecode"),
    ("compiler.interp",),
    ("compiler.transform",),  # folds with the interpreter's semantics
    ("compiler.modules",),
    ("compiler.lower",),
    ("compiler.runtime",),  # launches what the lowering compiles
)
# The faces, and the other faces each may use.
FACE_USES: dict[str, frozenset[str]] = {
    "compiler.cli": frozenset(),
    "syntax": frozenset(),
    "tile_lsp": frozenset(),
    "tile_kernel": frozenset({"tile_lsp", "syntax"}),  # completion and hovers; highlighting
}
# Imports against the order, each with its reason.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("compiler.ir", "compiler.text"): "str() of a dense attribute prints its body with the text layer's "
    "formatter (ir/attributes.py, imported when one is printed)",
}
PACKAGES = ("compiler", "tile_lsp", "tile_kernel", "syntax")


def _unit(module: str) -> str:
    """The layer unit of a dotted module name: `compiler.X` for the core's parts, the top
    package for the faces (`compiler.__main__` is the command line's)."""
    parts = module.split(".")
    if parts[0] != "compiler":
        return parts[0]
    if len(parts) == 1:
        return "compiler"
    if parts[1] == "__main__":
        return "compiler.cli"
    return f"compiler.{parts[1]}"


def _rank() -> dict[str, int]:
    rank = {unit: i for i, layer in enumerate(CORE_LAYERS) for unit in layer}
    for face in FACE_USES:
        rank[face] = len(CORE_LAYERS)
    return rank


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, imported module) of every import in the file, `if TYPE_CHECKING:` blocks left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test) == "TYPE_CHECKING":
                for rest in child.orelse:
                    visit(rest)
                continue
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - (child.level - 1)]
                    name = ".".join(base + ([child.module] if child.module else []))
                else:
                    name = child.module or ""
                if child.module is None or name == "compiler":
                    # `from . import x`, `from compiler import cli`: the names may be modules
                    found.extend((child.lineno, f"{name}.{alias.name}") for alias in child.names)
                else:
                    found.append((child.lineno, name))
            visit(child)

    visit(tree)
    return found


def _project_imports():
    """(file, line, its unit, the imported module, that module's unit) of every import of one
    of the project's packages, in every module of the project."""
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
            for line, imported in _imports(path, module):
                if imported.split(".")[0] in PACKAGES:
                    yield path.relative_to(REPO), line, _unit(module), imported, _unit(imported)


def _violations() -> list[str]:
    rank = _rank()
    problems = []
    for where, line, source, imported, target in _project_imports():
        assert source in rank, f"{where}: a package no layer names; add it to CORE_LAYERS or FACE_USES"
        if target == source or (source, target) in EXCEPTIONS:
            continue
        if target not in rank:
            target = "compiler"  # `from compiler import __version__`: a name, not a module
        if target in FACE_USES:
            allowed = target in FACE_USES.get(source, frozenset())  # the core uses no face
        else:
            allowed = rank[target] <= rank[source]  # its own layer, or one below
        if not allowed:
            problems.append(f"{where}:{line}: {source} imports {imported} ({target} is not below it)")
    return problems


def test_no_lower_layer_imports_a_higher_one() -> None:
    problems = _violations()
    assert not problems, "\n".join(problems)


def test_every_exception_is_still_needed() -> None:
    # An exception nobody needs any more is removed, so that the rule is not quietly wider.
    rank = _rank()
    used = {(source, target) for _, _, source, _, target in _project_imports()}
    for pair in EXCEPTIONS:
        assert pair in used, f"{pair}: no module imports that way any more; remove the exception"
        assert rank[pair[1]] > rank[pair[0]], f"{pair}: not against the order; remove the exception"


@pytest.mark.parametrize(
    ("source", "imported", "bad"),
    [
        ("compiler/lower/x.py", "from ..runtime import launch", True),
        ("compiler/runtime/x.py", "from ..lower import compile", False),
        ("tile_lsp/x.py", "from compiler.cli import main", True),
        ("tile_kernel/x.py", "from tile_lsp.documents import Analysis", False),
        ("compiler/ir/x.py", "if TYPE_CHECKING:\n    from ..dialect.opdef import OpDef", False),
        ("compiler/ir/x.py", "def f():\n    from compiler.dialect import ops", True),
    ],
)
def test_the_rule_sees_lazy_relative_and_absolute_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, imported: str, bad: bool
) -> None:
    # The rule itself, on a small tree shaped like the project's.
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    path = tmp_path / source
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"TYPE_CHECKING = False\n{imported}\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert bool(_violations()) == bad
