"""The op table: complete against the reference opcode list, and internally consistent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compiler.dialect import OPS, OPS_BY_OPCODE, TYPE_CONSTRAINTS, enum_for_kind, lookup_op
from compiler.dialect.opdef import OpDef, RegionDef
from compiler.dialect.ops import ALL_OPS
from compiler.ir import types as T

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "tests" / "data" / "reference_opcodes.txt"
SHARED = REPO.parent / "shared"

# Attribute kinds the schema defines (see `AttrDef` in compiler/dialect/opdef.py).
ATTR_KINDS = {
    "unit",
    "bool",
    "i32",
    "i64",
    "string",
    "symbol",
    "symbol_ref",
    "dense_i32_array",
    "dense_i64_array",
    "dense_bool_array",
    "array",
    "dense_elements",
    "type",
    "function_type",
    "optimization_hints",
    "assume_predicate",
    "dictionary",
    "di_attr",
    "bytecode_test_value",
}
TYPE_RULE_KINDS = {
    "same_type",
    "i1_same_shape",
    "same_shape",
    "same_rank",
    "same_element_type",
    "same_operands_and_result_shape",
    "same_operands_shape",
    "same_operands_and_result_element_type",
    "pointer_tile_of",
}
GROUPS = {
    "floating-point",
    "integer",
    "bitwise",
    "atomics",
    "conversion",
    "core",
    "control-flow",
    "memory",
    "view",
    "misc",
    "testing",
}
VERSION = re.compile(r"\d+\.\d+")


def read_reference() -> dict[str, tuple[int, str]]:
    ops: dict[str, tuple[int, str]] = {}
    for line in REFERENCE.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        mnemonic, opcode, since = line.split()
        assert mnemonic not in ops, f"{mnemonic} listed twice in {REFERENCE.name}"
        ops[mnemonic] = (int(opcode, 16), since)
    return ops


def public_ops() -> list[OpDef]:
    return [op for op in ALL_OPS if op.group != "testing"]


def declarative_ops() -> list[OpDef]:
    return [op for op in ALL_OPS if op.assembly is not None]


def names_of(op: OpDef) -> set[str]:
    return (
        {o.name for o in op.operands}
        | {a.name for a in op.attributes}
        | {r.name for r in op.results}
        | {r.name for r in op.regions}
    )


# ------------------------------------------------------------------ completeness


# 13.4's ops: no public Ops.td has them; opcodes from cuTile Python 1.7's encoder
# (`cuda.tile._bytecode.encodings`), checked by NVIDIA's 13.5 tileirdisasm in
# tests/bytecode/test_13_4_ops.py.
OPS_13_4 = {
    "insert": (0x76, "13.4"),
    "gdc_launch_dependents_tko": (0x77, "13.4"),
    "gdc_wait_tko": (0x78, "13.4"),
    "fpowi": (0x79, "13.4"),
    "memory_fence_alias_tko": (0x7A, "13.4"),
}


def test_public_ops_match_reference_opcodes() -> None:
    reference = read_reference()
    assert len(reference) == 100
    reference.update(OPS_13_4)
    ours = {op.mnemonic: (op.opcode, op.since) for op in public_ops()}
    missing = sorted(set(reference) - set(ours))
    extra = sorted(set(ours) - set(reference))
    assert not missing, f"ops missing from the table: {missing}"
    assert not extra, f"public ops not in the reference: {extra}"
    wrong = {m: (ours[m], reference[m]) for m in reference if ours[m] != reference[m]}
    assert not wrong, f"(ours, reference) opcode/version mismatches: {wrong}"


def test_no_duplicate_mnemonics_or_opcodes() -> None:
    mnemonics = [op.mnemonic for op in ALL_OPS]
    assert len(mnemonics) == len(set(mnemonics))
    assert len(OPS) == len(ALL_OPS)
    opcodes = [op.opcode for op in ALL_OPS if op.opcode is not None]
    assert len(opcodes) == len(set(opcodes))
    assert len(OPS_BY_OPCODE) == len(opcodes)


def test_testing_ops() -> None:
    testing = {op.mnemonic: op for op in ALL_OPS if op.group == "testing"}
    assert set(testing) == {
        "testing$func",
        "testing$bytecode_test_new_attribute",
        "testing$bytecode_test_evolution",
    }
    assert testing["testing$bytecode_test_new_attribute"].opcode == 0x3000
    assert testing["testing$func"].opcode == 0x3001
    assert testing["testing$bytecode_test_evolution"].opcode == 0x3002
    for op in testing.values():
        assert op.since == "250.0"
    for op in public_ops():
        assert op.opcode is not None and 0 <= op.opcode <= 0xFFF, op.name
        assert not op.mnemonic.startswith("testing$")


def _shared_spec_opcodes() -> dict[str, tuple[int, str]]:
    """Opcode rows found in ../shared/spec: `| 0x2A (42) | ftof | 13.1 | ... |`.

    Of the spec documents only `bytecode-ground-truth.md` (section 6.4) lists the opcodes;
    `001_*.txt` (the Binary Format chapter) describes the encoding but gives no per-op table.
    Where a document and BytecodeOpcodes.td disagree, the .td wins: such rows would go in
    `KNOWN_SPEC_DIFFERENCES` below (there are none today).
    """
    spec = SHARED / "spec"
    row = re.compile(r"^\|\s*0x([0-9A-Fa-f]+)\s*\(\d+\)\s*\|\s*([a-z0-9_$]+)\s*\|\s*(\d+\.\d+)\s*\|")
    found: dict[str, tuple[int, str]] = {}
    for path in sorted(spec.glob("*")):
        if path.suffix not in (".md", ".txt"):
            continue
        for line in path.read_text(errors="replace").splitlines():
            m = row.match(line.strip())
            if m:
                found[m.group(2)] = (int(m.group(1), 16), m.group(3))
    return found


# mnemonic -> what the shared spec says, where it is known to be wrong.
KNOWN_SPEC_DIFFERENCES: dict[str, tuple[int, str]] = {}


def test_cross_check_against_shared_spec() -> None:
    if not (SHARED / "spec").is_dir():
        pytest.skip("../shared/spec is absent")
    spec = _shared_spec_opcodes()
    if not spec:
        pytest.skip("no opcode table found in ../shared/spec")
    ours = {op.mnemonic: (op.opcode, op.since) for op in public_ops() if op.mnemonic not in OPS_13_4}
    assert set(spec) == set(ours), (sorted(set(spec) - set(ours)), sorted(set(ours) - set(spec)))
    for mnemonic, listed in spec.items():
        if mnemonic in KNOWN_SPEC_DIFFERENCES:
            assert listed == KNOWN_SPEC_DIFFERENCES[mnemonic]
            continue
        assert ours[mnemonic] == listed, f"{mnemonic}: table {ours[mnemonic]}, spec {listed}"


# ------------------------------------------------------------------ consistency


@pytest.mark.parametrize("op", ALL_OPS, ids=lambda op: op.mnemonic)
def test_op_fields(op: OpDef) -> None:
    assert op.group in GROUPS
    assert VERSION.fullmatch(op.since)
    assert op.summary and "\n" not in op.summary
    assert op.description
    args = (*op.operands, *op.attributes, *op.results, *op.regions)
    assert len({a.name for a in args}) == len(args), f"duplicate argument names in {op.name}"
    for arg in args:
        assert arg.doc, (op.name, arg.name)
        if not isinstance(arg, RegionDef):
            assert VERSION.fullmatch(arg.since), (op.name, arg.name)
    # More than one optional/variadic operand group needs recorded segment sizes.
    if sum(1 for o in op.operands if o.arity != "single") > 1:
        assert "AttrSizedOperandSegments" in op.traits, op.name
    assert sum(1 for r in op.results if r.arity == "variadic") <= 1


def test_constraint_names_exist() -> None:
    for op in ALL_OPS:
        for value in (*op.operands, *op.results):
            assert value.constraint in TYPE_CONSTRAINTS, (op.name, value.name, value.constraint)


def test_attribute_kinds() -> None:
    for op in ALL_OPS:
        for attr in op.attributes:
            if attr.kind.startswith("enum:"):
                enum = enum_for_kind(attr.kind)
                assert enum is not None, (op.name, attr.name, attr.kind)
                if attr.default is not None:
                    assert enum.by_keyword(attr.default) is not None, (op.name, attr.name)
            else:
                assert attr.kind in ATTR_KINDS, (op.name, attr.name, attr.kind)
            if attr.kind == "unit":
                assert attr.optional and attr.default is None, (op.name, attr.name)


def test_type_rules_name_arguments() -> None:
    for op in ALL_OPS:
        names = names_of(op)
        for kind, args, *_ in op.type_rules:
            assert kind in TYPE_RULE_KINDS, (op.name, kind)
            assert set(args) <= names, (op.name, kind, args)
            optional = {o.name for o in op.operands if o.arity == "optional"}
            if kind == "same_type":
                # The parser copies types along same_type rules; an absent operand would break it.
                assert not set(args) & optional, (op.name, args)


_VAR = re.compile(r"\$(\w+)")
_TYPE = re.compile(r"type\(\$(\w+)\)")


def test_assembly_references_known_names() -> None:
    for op in declarative_ops():
        assert op.assembly == " ".join(op.assembly.split()), op.name
        for name in _VAR.findall(op.assembly):
            assert name in names_of(op), f"{op.name}: ${name}"
        assert "attr-dict" in op.assembly, op.name


def _inferable(op: OpDef) -> set[str]:
    known = set(_TYPE.findall(op.assembly or ""))
    known |= {r.name for r in op.results if r.constraint == "token"}  # a buildable type, as in ODS
    changed = True
    while changed:
        changed = False
        for kind, args, *_ in op.type_rules:
            if kind == "same_type" and known & set(args) and not set(args) <= known:
                known |= set(args)
                changed = True
            elif kind == "i1_same_shape" and args[0] in known and args[1] not in known:
                known.add(args[1])
                changed = True
    return known


@pytest.mark.parametrize("op", declarative_ops(), ids=lambda op: op.mnemonic)
def test_results_printed_or_inferable(op: OpDef) -> None:
    known = _inferable(op)
    for result in op.results:
        assert result.name in known, f"{op.name}: type of result {result.name!r} cannot be inferred"


def test_grid_queries_infer_all_three_results() -> None:
    for name in ("get_tile_block_id", "get_num_tile_blocks"):
        op = lookup_op(name)
        assert op is not None
        assert ("same_type", tuple(r.name for r in op.results)) in op.type_rules


def test_lookup_op_accepts_both_spellings() -> None:
    addf = lookup_op("addf")
    assert addf is not None and addf is OPS["cuda_tile.addf"]
    assert lookup_op("cuda_tile.addf") is addf
    assert addf.opcode == 0x02
    func = lookup_op("testing$func")
    assert func is not None and func is lookup_op("cuda_tile.testing$func")
    assert lookup_op("module") is OPS["cuda_tile.module"]
    assert lookup_op("nope") is None
    assert lookup_op("cuda_tile.nope") is None
    assert lookup_op("") is None
    assert OPS_BY_OPCODE[0x75].mnemonic == "atomic_red_view_tko"


def test_structural_ops() -> None:
    module = OPS["cuda_tile.module"]
    assert [r.name for r in module.regions] == ["body"]
    assert {"IsolatedFromAbove", "SymbolTable", "NoTerminator"} <= module.traits
    entry = OPS["cuda_tile.entry"]
    assert entry.assembly is None and [r.name for r in entry.regions] == ["body"]
    assert "SingleBlockImplicitTerminator:ReturnOp" in entry.traits
    glob = OPS["cuda_tile.global"]
    assert [a.name for a in glob.attributes] == [
        "sym_name",
        "value",
        "alignment",
        "constant",
        "symbol_visibility",
    ]
    assert glob.attribute("symbol_visibility").default == "public"
    assert OPS["cuda_tile.for"].traits >= {"SingleBlockImplicitTerminator:ContinueOp"}
    assert "ParentOneOf:IfOp,LoopOp" in OPS["cuda_tile.break"].traits


def test_definition_order_is_kept() -> None:
    # The bytecode relies on the ODS order of each kind of argument.
    cas = OPS["cuda_tile.atomic_cas_tko"]
    assert [o.name for o in cas.operands] == ["pointers", "cmp", "val", "mask", "token"]
    assert [a.name for a in cas.attributes] == ["memory_ordering_semantics", "memory_scope"]
    load = OPS["cuda_tile.load_ptr_tko"]
    assert [(o.name, o.arity) for o in load.operands] == [
        ("source", "single"),
        ("mask", "optional"),
        ("paddingValue", "optional"),
        ("token", "optional"),
    ]
    assert [a.name for a in load.attributes] == [
        "memory_ordering_semantics",
        "memory_scope",
        "optimization_hints",
    ]
    addi = OPS["cuda_tile.addi"]
    assert addi.attribute("overflow").default == "none"
    assert OPS["cuda_tile.negi"].attribute("overflow").since == "13.2"
    new_attribute = OPS["cuda_tile.testing$bytecode_test_new_attribute"]
    assert new_attribute.attribute("new_param").default == "42"


def test_constraints_accept_the_right_types() -> None:
    f32 = T.FLOAT_TYPES["f32"]
    tile_f32 = T.TileType((4,), f32)
    assert TYPE_CONSTRAINTS["base_float_tile"].accepts(tile_f32)
    assert not TYPE_CONSTRAINTS["base_float_tile"].accepts(T.TileType((4,), T.FLOAT_TYPES["tf32"]))
    assert TYPE_CONSTRAINTS["float_tile"].accepts(T.TileType((4,), T.FLOAT_TYPES["tf32"]))
    assert not TYPE_CONSTRAINTS["int_tile"].accepts(T.TileType((4,), T.I4))
    assert TYPE_CONSTRAINTS["int_or_i4_tile"].accepts(T.TileType((4,), T.I4))
    assert TYPE_CONSTRAINTS["scalar_i32_tile"].accepts(T.TileType((), T.I32))
    assert not TYPE_CONSTRAINTS["scalar_i32_tile"].accepts(T.TileType((1,), T.I32))
    assert TYPE_CONSTRAINTS["pointer_tile"].accepts(T.TileType((2,), T.PointerType(f32)))
    assert not TYPE_CONSTRAINTS["pointer_tile"].accepts(tile_f32)
    assert TYPE_CONSTRAINTS["token"].accepts(T.TOKEN)
    view = T.PartitionViewType((4,), T.TensorViewType(f32, (16,), (1,)), (0,))
    assert TYPE_CONSTRAINTS["tile_view"].accepts(view)
    assert not TYPE_CONSTRAINTS["tile_view"].accepts(T.TensorViewType(f32, (16,), (1,)))
    assert TYPE_CONSTRAINTS["cuda_tile_any"].accepts(view)
    assert not TYPE_CONSTRAINTS["cuda_tile_any"].accepts(T.OpaqueType("index"))
    assert TYPE_CONSTRAINTS["any"].accepts(T.OpaqueType("index"))
    for name, constraint in TYPE_CONSTRAINTS.items():
        assert constraint.description, name
