"""Random mutations of valid modules never make the verifier raise or hang.

Two kinds of mutation, both starting from modules that verify cleanly (our examples always;
`../shared/samples` and the valid conformance files when shared/ is there):

* text: replace tokens by others of the same kind taken from the corpus (types, op names,
  numbers, value names, keywords), delete or duplicate lines; whatever still parses is verified;
* IR: rewire operands to other values, change result types, drop ops, attributes, regions
  or blocks, move ops between blocks: IR no parser would produce, the way a buggy pass or
  bytecode would.

Verification runs both ways (keep going, and stop at the first error as cuda-tile-opt does),
in a thread that must finish; every diagnostic must also format.
"""

from __future__ import annotations

import re
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.corpus import conformance_files, example_files, read, run_bounded, sample_files

HANG_SECONDS = 10.0  # catches hangs only; not a speed test

VALID_CONFORMANCE = ("ops", "arith", "conversion", "types", "memory_consistency_ops", "opt_hints", "dense_attr")


@cache
def corpus() -> tuple[str, ...]:
    from compiler.text import split_input
    from compiler.verify import check_text

    texts = [read(p) for p in example_files()] + [read(p) for p in sample_files()]
    for path in conformance_files():
        if path.stem in VALID_CONFORMANCE:
            texts += [chunk for chunk, _ in split_input(read(path)) if chunk.strip()]
    # Only modules that verify cleanly now, so that every diagnostic later is the mutation's.
    return tuple(t for t in texts if not check_text(t, allow_unregistered=True)[1])


_TOKEN = re.compile(r"\s+|![\w.]+<[^>\n]*>+|[%@^#!]?[\w.$-]+|\"(?:[^\"\\\n]|\\.)*\"|//[^\n]*|.", re.S)


def _kind(token: str) -> str:
    if token[0] in "%@^#!":
        return token[0]
    if token[0].isdigit() or (token[0] == "-" and token[1:2].isdigit()):
        return "number"
    if token[0].isalpha() or token[0] == "_":
        return "word"
    return "other"


@cache
def vocabulary() -> dict[str, tuple[str, ...]]:
    """The corpus's tokens by kind, plus type spellings that are often wrong."""
    kinds: dict[str, set[str]] = {}
    for text in corpus():
        for token in _TOKEN.findall(text):
            if not token.isspace():
                kinds.setdefault(_kind(token), set()).add(token)
    kinds.setdefault("number", set()).update({"0", "1", "3", "-1", "7", "1024", "4294967296", "65536"})
    kinds.setdefault("word", set()).update(
        {"tile", "f32", "i1", "i4", "f4E2M1FN", "ptr", "token", "tensor_view", "partition_view"}
    )
    return {k: tuple(sorted(v)) for k, v in kinds.items()}


def _verify_checked(text: str | None = None, module=None) -> None:
    """Verify in a thread, both ways: fail on an exception or a hang."""
    from compiler.verify import VerifyOptions, check_text, verify

    def work() -> None:
        diagnostics = []
        for keep_going in (True, False):
            options = VerifyOptions(keep_going=keep_going)
            if module is not None:
                diagnostics += verify(module, options)
            else:
                diagnostics += check_text(text or "", "fuzz.tileir", options, allow_unregistered=True)[1]
        for diag in diagnostics:
            diag.format(with_snippet=True)

    run_bounded(work, HANG_SECONDS, "verification", f"\ninput: {(text or '')[:3000]!r}")


_FUZZ = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_corpus_verifies_cleanly() -> None:
    assert corpus(), "no valid module to mutate (examples/*.tileir missing?)"


@_FUZZ
@given(data=st.data())
def test_token_substitutions(data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(corpus()), label="source")
    tokens = _TOKEN.findall(text)
    positions = [i for i, t in enumerate(tokens) if not t.isspace() and not t.startswith("//")]
    vocab = vocabulary()
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        i = data.draw(st.sampled_from(positions), label="position")
        choices = vocab.get(_kind(tokens[i]), ())
        if choices:
            tokens[i] = data.draw(st.sampled_from(choices), label="replacement")
    _verify_checked("".join(tokens))


@_FUZZ
@given(data=st.data())
def test_line_edits(data: st.DataObject) -> None:
    lines = data.draw(st.sampled_from(corpus()), label="source").splitlines()
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        if not lines:
            break
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        if data.draw(st.booleans(), label="delete"):
            del lines[i]
        else:
            j = data.draw(st.integers(0, len(lines)), label="to")
            lines.insert(j, lines[i])
    _verify_checked("\n".join(lines))


def _mutate_ir(module, data: st.DataObject) -> None:
    from compiler.ir.core import Block, OpResult

    ops = [op for op in module.walk() if op.name != "builtin.module"]
    if not ops:
        return
    values = [v for op in ops for v in op.results]
    values += [a for op in ops for r in op.regions for b in r.blocks for a in b.arguments]
    types = sorted({str(v.type): v.type for v in values}.items())
    op = data.draw(st.sampled_from(ops), label="op")
    action = data.draw(
        st.sampled_from(["operand", "result_type", "drop_op", "drop_attr", "drop_region", "drop_block", "move"]),
        label="action",
    )
    if action == "operand" and op.operands and values:
        operands = list(op.operands)
        operands[data.draw(st.integers(0, len(operands) - 1))] = data.draw(st.sampled_from(values))
        op.set_operands(operands)
    elif action == "result_type" and op.results and types:
        i = data.draw(st.integers(0, len(op.results) - 1))
        op.results[i] = OpResult(op, i, data.draw(st.sampled_from(types))[1], op.results[i].name)
    elif action == "drop_op" and op.parent is not None:
        op.parent.ops.remove(op)
    elif action == "drop_attr" and op.properties:
        del op.properties[data.draw(st.sampled_from(sorted(op.properties)))]
    elif action == "drop_region" and op.regions:
        op.regions.pop(data.draw(st.integers(0, len(op.regions) - 1)))
    elif action == "drop_block" and op.regions and op.regions[0].blocks:
        op.regions[0].blocks.pop()
    elif action == "move" and op.parent is not None:
        # Not into the op's own regions: that would make the IR a cycle, not a tree.
        inside = {id(o) for o in op.walk()}
        blocks: list[Block] = [b for o in ops if id(o) not in inside for r in o.regions for b in r.blocks]
        if blocks:
            target = data.draw(st.sampled_from(blocks))
            op.parent.ops.remove(op)
            target.ops.insert(data.draw(st.integers(0, len(target.ops))), op)
            op.parent = target


@_FUZZ
@given(data=st.data())
def test_ir_mutations(data: st.DataObject) -> None:
    from compiler.text import ParseOptions, parse

    text = data.draw(st.sampled_from(corpus()), label="source")
    module = parse(text, "fuzz.tileir", ParseOptions(allow_unregistered=True)).module
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        _mutate_ir(module, data)
    _verify_checked(text, module)
