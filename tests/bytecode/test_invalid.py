"""The conformance suite's bytecode inputs (`test/Bytecode/invalid/`, `versioning/Inputs/`):
our reader reaches the verdict NVIDIA's tileirdisasm reaches, and where both reject a file,
each names the problem. Our words are those the suite's own CHECK lines expect of
`cuda-tile-translate` (13.3); tileirdisasm here is 13.5, whose driver words some differently.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.bytecode import BytecodeError, read_bytecode

from .util import (
    BYTECODE_SUFFIXES,
    CONFORMANCE_TEST_DIR,
    INVALID_DIR,
    VERSIONING_INPUTS_DIR,
    require_shared,
    require_tileirdisasm,
    run_tileirdisasm_file,
)

# file name -> (a substring of our message, a substring of tileirdisasm's), or None: both read it.
VERDICTS: dict[str, tuple[str, str] | None] = {
    # tileirdisasm 13.5 checks the magic in its driver before its reader does.
    "invalid_magic_number.tileirbc": ("invalid magic number", "input does not correspond to Tile IR bytecode"),
    "unsupported_version.tileirbc": ("unsupported Tile version 18.0.0", "unsupported Tile version 18.0.0"),
    "invalid_section_id.tileirbc": ("unknown section ID: 127", "unknown section ID: 127"),
    "excessive_section_length.tileirbc": ("end section is not the last section", "end section is not the last section"),
    "invalid_dense_map_value.bc": (
        "array contains unsupported value -2147483648",
        "array contains unsupported value -2147483648",
    ),
    # Its string table has an out-of-range offset; NVIDIA's reader clamps it to an empty string,
    # so the first complaint is the empty key of the hints dictionary.
    "invalid_attribute_name.bc": (
        "invalid empty attribute name for DictionaryAttr element 0",
        "invalid empty attribute name for DictionaryAttr element 0",
    ),
    "f4e2m1fn-in-13.1.tileirbc": (
        "type 'Float4E2M1FN' requires bytecode version 13.3+, file version is 13.1",
        "type 'Float4E2M1FN' requires bytecode version 13.3+, file version is 13.1",
    ),
    "negi-op-13.1.tileirbc": None,
    "print-op-13.1.tileirbc": None,
}


def _inputs() -> list[Path]:
    found = []
    for folder in (INVALID_DIR, VERSIONING_INPUTS_DIR):
        if folder.is_dir():
            found.extend(sorted(p for p in folder.rglob("*") if p.suffix in BYTECODE_SUFFIXES))
    return found


def _check_lines() -> str:
    """Every `// ...:` comment of the suite's bytecode tests: what cuda-tile-translate prints."""
    lines = []
    for path in (CONFORMANCE_TEST_DIR / "Bytecode").rglob("*.mlir"):
        lines.extend(line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("//"))
    return "\n".join(lines)


def test_every_input_has_a_verdict() -> None:
    require_shared()
    names = sorted(p.name for p in _inputs())
    assert names == sorted(VERDICTS), "new or removed inputs: update VERDICTS"


def test_our_messages_are_the_ones_the_suite_expects() -> None:
    """Our expected words are not invented: the suite checks for each of them."""
    require_shared()
    checks = _check_lines()
    for name, verdict in VERDICTS.items():
        if verdict is not None:
            assert verdict[0] in checks, f"{name}: {verdict[0]!r} is in no CHECK line of test/Bytecode"


@pytest.mark.parametrize("path", _inputs(), ids=lambda p: p.name)
def test_verdict_matches_tileirdisasm(path: Path) -> None:
    verdict = VERDICTS[path.name]
    data = path.read_bytes()
    try:
        read_bytecode(data)
        ours = None
    except BytecodeError as exc:
        ours = str(exc)
    tool = require_tileirdisasm()
    nvidia = run_tileirdisasm_file(path, tool)
    if verdict is None:
        assert ours is None, f"our reader rejects it: {ours}"
        assert nvidia.ok, f"tileirdisasm rejects it: {nvidia.stderr}"
        return
    ours_expected, nvidia_expected = verdict
    assert ours is not None, "our reader accepts it"
    assert ours_expected in ours, f"our message: {ours}"
    assert not nvidia.ok, "tileirdisasm accepts it"
    assert nvidia_expected in nvidia.stderr, f"tileirdisasm's message: {nvidia.stderr}"


@pytest.mark.parametrize("path", _inputs(), ids=lambda p: p.name)
def test_messages_say_where(path: Path) -> None:
    """A rejection names its byte offset (what `BytecodeError.__str__` starts with)."""
    if VERDICTS[path.name] is None:
        return
    with pytest.raises(BytecodeError) as caught:
        read_bytecode(path.read_bytes())
    assert str(caught.value).startswith("at byte "), str(caught.value)
