"""`fmt`, `check` and `disasm` of big modules in several processes (compiler/text/parts.py,
compiler/verify's check_text_in_parts, compiler/bytecode/disasm.py): the answer is the
one-process answer, or None (and the command does the job in one process)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from compiler.ir.workers import fork_map
from compiler.text import PrintOptions, parse, parts, print_module, split_input
from compiler.verify import check_text, check_text_in_parts

from ..corpus import EXAMPLES_DIR, REPO, SAMPLES_DIR, conformance_files, example_files, read, sample_files

FMT = PrintOptions(keep_comments=True)


def _kernels() -> list[tuple[str, list[str]]]:
    """(name, lines) of each example's kernel, unindented."""
    found = []
    for path in example_files():
        lines = read(path).splitlines()
        start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("entry @"))
        indent = len(lines[start]) - len(lines[start].lstrip())
        end = next(i for i in range(start, len(lines)) if lines[i] == " " * indent + "}")
        name = lines[start].split("@", 1)[1].split("(", 1)[0]
        found.append((name, [line[indent:] for line in lines[start : end + 1]]))
    return found


def big_module(copies: int = 4, comments: bool = True, extra: str = "") -> str:
    """The examples' kernels `copies` times each in one module, renamed, with a global and
    comments of each kind around and inside them."""
    out = ["// a module of many kernels", "cuda_tile.module @many {"]
    out.append("  global @table <f32: [1.0, 2.0, 3.0, 4.0]> : tile<4xf32>")
    for i in range(copies):
        for name, lines in _kernels():
            if comments and i % 2:
                out.append(f"  // copy {i} of @{name}")
            out.append("  " + lines[0].replace(f"@{name}(", f"@{name}_{i}(", 1))
            out.extend("  " + line for line in lines[1:-1])
            out.append("  }" + ("  // end of the kernel" if comments and i == 1 else ""))
            out.append("")
    out.append(extra)
    out.append("  // the last kernel is above")
    out.append("}")
    out.append("// after the module")
    return "\n".join(out) + "\n"


def serial_format(text: str) -> str:
    result = parse(text, "t.tileir")
    assert not result.diagnostics, result.diagnostics[0].format()
    return print_module(result.module, FMT)


@pytest.mark.parametrize("count", [2, 3, 5])
def test_format_in_parts_is_the_serial_text(count):
    text = big_module()
    got = parts.format_text(text, "t.tileir", FMT, parts=count)
    assert got is not None, "the plain module should be formatted in parts"
    assert got == serial_format(text)


def test_format_keeps_every_comment_once():
    text = big_module()
    got = parts.format_text(text, "t.tileir", FMT, parts=3)
    assert got is not None
    for comment in ("// a module of many kernels", "// copy 1 of", "// end of the kernel", "// after the module"):
        assert got.count(comment) == text.count(comment), comment


@pytest.mark.parametrize("count", [2, 3, 4])
def test_comment_lines_above_kernels_go_with_them(count):
    # Every kernel has comment lines (and a blank line) above it, and some a comment after
    # their closing brace: each cut takes the lines above a kernel along with it.
    text = big_module(comments=False).replace("\n  entry @", "\n  // kernel\n\n  // its doc\n  entry @")
    text = text.replace("\n  }\n\n  // kernel", "\n  } // done\n  // between\n\n  // kernel", 2)
    got = parts.format_text(text, "t.tileir", FMT, parts=count)
    assert got is not None
    assert got == serial_format(text)
    assert got.count("// its doc") == text.count("// its doc") and got.count("// done") == 2
    assert check_text_in_parts(text, "t.tileir", None, parts=count) is True


def test_check_in_parts():
    text = big_module()
    assert check_text_in_parts(text, "t.tileir", None, parts=2) is True
    assert check_text_in_parts(text, "t.tileir", None, parts=4) is True


def test_a_part_lexes_little_of_the_kernels_it_skips(monkeypatch):
    """The other parts' kernels are skipped as one range where only spaces separate them (a
    comment between two keeps them apart): after each skip the lexer reads a window of text
    ahead, which, kernel by kernel, was the next kernel to skip (a part lexed 83 % of a
    two-part module)."""
    from compiler.ir.source import SourceFile
    from compiler.text import lexer
    from compiler.text.parser import ParseOptions

    text = big_module(copies=12, comments=False)
    plan = parts._scan(text)
    assert plan is not None
    first, second = parts._runs(plan, 2)
    ranges = parts._ranges(text, second)
    assert ranges == [(second[0].start, second[-1].end)]
    commented = big_module(copies=12)
    plan_c = parts._scan(commented)
    assert len(parts._ranges(commented, parts._runs(plan_c, 2)[1])) > 1

    lexed = []
    fill = lexer.TokenStream._fill

    def counting(self, pos, *args):
        token = fill(self, pos, *args)
        lexed.append(self._hi - pos)
        return token

    monkeypatch.setattr(lexer.TokenStream, "_fill", counting)
    parser, result = parts._parse(SourceFile(text, "t.tileir"), ranges, ParseOptions())
    assert result is not None and parser.skipped == ranges
    own = first[-1].end - first[0].start
    assert sum(lexed) < own + (len(text) - own) * 0.2, (sum(lexed), own, len(text))


def test_a_global_used_by_a_kernel_of_another_part():
    use = "  entry @reads_table() {\n    %p = get_global @table : tile<ptr<f32>>\n    return\n  }\n"
    text = big_module(extra=use)
    assert not check_text(text, "t.tileir")[1]
    assert check_text_in_parts(text, "t.tileir", None, parts=3) is True


def _in_last_kernel(text: str, line: str) -> str:
    at = text.rindex("return\n  }")
    return text[:at] + line + text[at:]


_MISSING_GLOBAL = "  entry @reads_nothing() {\n    %p = get_global @missing : tile<ptr<f32>>\n    return\n  }\n"


@pytest.mark.parametrize(
    "text",
    [
        big_module().replace("%bx, %by, %bz = get_tile_block_id", "%bx, %by = get_tile_block_id"),  # parse
        big_module(extra=_MISSING_GLOBAL),  # verification
        big_module().replace("entry @vector_add_2(", "func @vector_add_2("),  # a warning
        _in_last_kernel(big_module(), "%q = addf %nope, %nope : tile<f32>\n    "),  # in a forked part
    ],
    ids=["parse-error", "verify-error", "warning", "error-in-last-kernel"],
)
def test_anything_to_report_takes_the_serial_path(text):
    assert check_text(text, "t.tileir")[1], "the change should be reported"
    assert check_text_in_parts(text, "t.tileir", None, parts=2) is None
    assert check_text_in_parts(text, "t.tileir", None, parts=3) is None
    if parse(text, "t.tileir").diagnostics:
        assert parts.format_text(text, "t.tileir", FMT, parts=2) is None


def test_kernel_names_must_differ_for_check():
    text = big_module().replace("@vector_add_3(", "@vector_add_0(")
    assert any(d.code == "symbol-redefinition" for d in check_text(text, "t.tileir")[1])
    assert check_text_in_parts(text, "t.tileir", None, parts=2) is None
    # fmt does not verify: the parts still print the one-process text.
    assert parts.format_text(text, "t.tileir", FMT, parts=2) == serial_format(text)


def test_a_kernel_that_ends_elsewhere_than_scanned():
    # A trailing location after the body: the scan's end is the `}`, the op's the location.
    text = big_module()
    at = text.rindex("  }\n", 0, text.index("  // the last"))
    text = text[:at] + '  } loc("x.py":3:1)\n' + text[at + 4 :]
    assert parse(text, "t.tileir").diagnostics == []
    assert check_text_in_parts(text, "t.tileir", None, parts=2) is None
    assert not check_text(text, "t.tileir")[1]


def test_unnamed_values_take_the_serial_path():
    text = big_module().replace("%tok = make_token : token", "make_token : token\n    %tok = make_token : token")
    assert parse(text, "t.tileir").diagnostics == []
    assert parts.format_text(text, "t.tileir", FMT, parts=2) is None


def _corpus_texts():
    files = example_files() + sample_files() + conformance_files()
    for path in files:
        for chunk, _ in split_input(read(path)):
            yield path.name, chunk


def test_every_input_of_the_corpus():
    """Wherever the parts answer, they answer what one process does; a corpus text of one kernel
    gets None (no parts), which the test counts too so that it cannot pass by never splitting."""
    answered = 0
    for name, text in _corpus_texts():
        for count in (2, 3):
            got = parts.format_text(text, name, FMT, parts=count)
            if got is not None:
                answered += 1
                assert got == serial_format(text), name
            ok = check_text_in_parts(text, name, None, parts=count)
            if ok is not None:
                answered += 1
                assert not check_text(text, name)[1], name
    if conformance_files():
        assert answered >= 4, "no multi-kernel text of the corpus took the parallel path"


def test_fork_map_failures_give_none():
    def boom():
        raise ValueError("in the child")

    assert fork_map([lambda: 1, lambda: 2, lambda: 3]) == [1, 2, 3]
    assert fork_map([lambda: 1, boom]) is None
    assert fork_map([lambda: 1, lambda: os._exit(3)]) is None
    assert fork_map([lambda: 1]) is None  # nothing to fan out


def test_cli_fmt_and_check_of_a_big_file(tmp_path):
    text = big_module(copies=40)
    assert len(text) > 2 * parts.MIN_PART_CHARS
    path = tmp_path / "big.tileir"
    path.write_text(text)
    env = {**os.environ, "TILEIR_JOBS": "2"}
    cmd = [sys.executable, "-m", "compiler"]
    fmt = subprocess.run([*cmd, "fmt", str(path)], capture_output=True, text=True, env=env, cwd=REPO)
    assert fmt.returncode == 0, fmt.stderr
    assert fmt.stdout == serial_format(text)
    check = subprocess.run([*cmd, "check", str(path)], capture_output=True, text=True, env=env, cwd=REPO)
    assert check.returncode == 0 and "1 file ok" in check.stdout, check.stderr
    # An error in the last kernel: reported as one process reports it.
    bad = path.with_name("bad.tileir")
    bad.write_text(_in_last_kernel(text, "%q = addf %nope, %nope : tile<f32>\n    "))
    check = subprocess.run([*cmd, "check", str(bad)], capture_output=True, text=True, env=env, cwd=REPO)
    one = subprocess.run(
        [*cmd, "check", str(bad)], capture_output=True, text=True, env={**env, "TILEIR_JOBS": "1"}, cwd=REPO
    )
    assert check.returncode == one.returncode == 1
    assert "%nope" in check.stderr and check.stderr == one.stderr


# --------------------------------------------------------------------------------------------
# disasm


def _bytecode(text: str) -> bytes:
    from compiler.bytecode import write_bytecode

    result, diagnostics = check_text(text, "t.tileir")
    assert not diagnostics
    return write_bytecode(result.module, (13, 3))


@pytest.mark.parametrize("count", [2, 3, 7])
def test_disassembly_in_parts_is_the_serial_text(count):
    from compiler.bytecode import read_bytecode
    from compiler.bytecode.disasm import disassembly, disassembly_in_parts

    data = _bytecode(big_module())
    got = disassembly_in_parts(data, parts=count)
    assert got is not None
    assert got == disassembly(read_bytecode(data))
    assert got.count("@table <") == 1


def test_disassembly_in_parts_of_the_samples():
    from compiler.bytecode import read_bytecode
    from compiler.bytecode.disasm import disassembly, disassembly_in_parts

    files = sorted(SAMPLES_DIR.glob("*.tileirbc")) if SAMPLES_DIR.is_dir() else []
    files += [p for p in EXAMPLES_DIR.glob("*.tileirbc")]
    for path in files:
        data = path.read_bytes()
        assert disassembly_in_parts(data, parts=2) == disassembly(read_bytecode(data)), path.name


def test_damaged_bytecode_is_left_to_one_process():
    from compiler.bytecode.disasm import disassembly_in_parts

    data = _bytecode(big_module())
    assert disassembly_in_parts(data[: len(data) // 2], parts=2) is None  # cut short


def test_cli_disasm_of_a_big_file(tmp_path):
    data = _bytecode(big_module(copies=40))
    path = tmp_path / "big.tileirbc"
    path.write_bytes(data)
    cmd = [sys.executable, "-m", "compiler", "disasm", str(path)]
    two = subprocess.run(cmd, capture_output=True, env={**os.environ, "TILEIR_JOBS": "2"}, cwd=REPO)
    one = subprocess.run(cmd, capture_output=True, env={**os.environ, "TILEIR_JOBS": "1"}, cwd=REPO)
    assert two.returncode == one.returncode == 0, two.stderr
    assert two.stdout == one.stdout and b"entry @matmul_39" in two.stdout


def test_comments_anywhere():
    """Comment lines, trailing comments and blank lines put at random places of the module:
    wherever the parts answer, it is the one-process text (a fixed seed: the same places
    every run)."""
    import random

    rng = random.Random(17)
    base = big_module(copies=2, comments=False).split("\n")
    answered = 0
    for _ in range(25):
        lines = list(base)
        for _ in range(12):
            at = rng.randrange(1, len(lines) - 1)
            kind = rng.randrange(3)
            if kind == 0:
                lines.insert(at, "  " * rng.randrange(3) + f"// note {at}")
            elif kind == 1 and lines[at].strip():
                lines[at] += f" // trailing {at}"
            else:
                lines.insert(at, "")
        text = "\n".join(lines)
        if parse(text, "t.tileir").diagnostics:
            continue
        for count in (2, 3):
            got = parts.format_text(text, "t.tileir", FMT, parts=count)
            if got is not None:
                answered += 1
                assert got == serial_format(text)
    assert answered >= 10, answered
