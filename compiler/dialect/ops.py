"""Every op of the cuda_tile dialect (13.3), declared once.

The facts (names, opcodes, versions, operand/attribute/result/region lists in
definition order, assembly formats, traits and type relations) follow NVIDIA's
`Ops.td`, `TestingOps.td` and `BytecodeOpcodes.td`; the summaries, descriptions and
argument docs are our own words.

Conventions (see `opdef.py` for the schema):

* `assembly` is the declarative format with whitespace collapsed, or None where the
  syntax is written by hand (`compiler.text.custom_ops`).
* Traits are MLIR trait names; parameterised ones are spelled `Name:Arg1,Arg2`, e.g.
  `ParentOneOf:IfOp,LoopOp` and `SingleBlockImplicitTerminator:ContinueOp`. For `if` the
  implicit terminator is `yield`, but `break`, `continue` and `return` may end its blocks too
  (their `ParentOneOf` says so); for `loop` it is `continue`, and `break` may end it.
  C++ interface plumbing (OpAsmOpInterface, InferTypeOpAdaptor) is left out.
* Constraint names are keys of `constraints.TYPE_CONSTRAINTS`.
* `get_tile_block_id` and `get_num_tile_blocks` carry a `same_type` rule that the
  definition leaves implicit (their format prints only the first result's type).
"""

from __future__ import annotations

from ..ir.enums import EnumCase, EnumDef
from .opdef import AttrDef, OpDef, OperandDef, RegionDef, ResultDef

# The test-only enum of `testing$bytecode_test_evolution` (TestingAttrs.td; written
# `priority = <low>` in the op, `#cuda_tile.bytecode_test_priority<low>` in generic form).
# It is not part of the public dialect, so it lives here rather than in `compiler.ir.enums`;
# `compiler.dialect.enum_for_kind` looks in both places.
BYTECODE_TEST_PRIORITY = EnumDef(
    "BytecodeTestPriority",
    "bytecode_test_priority",
    "250.0",
    (
        EnumCase("low", 0, "250.0", "low priority"),
        EnumCase("normal", 1, "250.0", "normal priority"),
        EnumCase("high", 2, "250.1", "high priority (added in 250.1)"),
    ),
    "A test-only enum used to check enum versioning in bytecode.",
    angle=True,
)

TESTING_ENUMS: dict[str, EnumDef] = {BYTECODE_TEST_PRIORITY.mnemonic: BYTECODE_TEST_PRIORITY}

# ================================================================================================
# Core: module structure, constants and shape manipulation
# ================================================================================================

_CORE: tuple[OpDef, ...] = (
    OpDef(
        "broadcast",
        0x0B,
        "13.1",
        summary="Stretch size-1 dimensions to a larger shape",
        group="core",
        operands=(OperandDef("source", "tile", doc="tile with unit dimensions to expand"),),
        results=(ResultDef("result", "tile", doc="expanded tile"),),
        assembly=("$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        # AllRanksMatch (an ODS predicate) is checked before the native
        # SameOperandsAndResultElementType trait.
        type_rules=(
            ("same_rank", ("source", "result")),
            ("same_operands_and_result_element_type", ()),
        ),
        description=(
            "Repeats the data of `source` along every dimension of extent 1 to reach the result "
            "shape. Rank and element type are unchanged, so new dimensions must be added with "
            "`reshape` first."
        ),
        examples=("%r = broadcast %x : tile<1x4xf32> -> tile<8x4xf32>",),
    ),
    OpDef(
        "cat",
        0x0C,
        "13.1",
        summary="Concatenate two tiles along a dimension",
        group="core",
        operands=(
            OperandDef("lhs", "tile", doc="first part"),
            OperandDef("rhs", "tile", doc="second part"),
        ),
        attributes=(AttrDef("dim", "i64", doc="dimension to join along"),),
        results=(ResultDef("result", "tile", doc="concatenated tile"),),
        assembly=(
            "$lhs `,` $rhs `dim` `=` $dim attr-dict `:` custom<CudaTileType>(type($lhs)) `,` "
            "custom<CudaTileType>(type($rhs)) `->` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_rank", ("lhs", "rhs", "result")),
            ("same_element_type", ("lhs", "rhs", "result")),
        ),
        description=(
            "Places `rhs` after `lhs` along dimension `dim`. Both inputs and the result have the "
            "same rank and element type; all other extents must agree and the result's extent "
            "along `dim` is the sum."
        ),
        examples=("%r = cat %a, %b dim = 1 : tile<2x4xf32>, tile<2x4xf32> -> tile<2x8xf32>",),
    ),
    OpDef(
        "constant",
        0x10,
        "13.1",
        summary="Tile built from a literal",
        group="core",
        attributes=(AttrDef("value", "dense_elements", doc="elements of the tile"),),
        results=(ResultDef("result", "number_tile", doc="tile holding the literal"),),
        assembly="custom<DenseTypedElementsAttr>($value, type($result)) attr-dict",
        traits=frozenset({"ConstantLike", "Pure"}),
        type_rules=(("same_type", ("value", "result")),),
        description=(
            "Creates a tile from `value`: either one scalar repeated in every element (`<f32: "
            "1.0>`) or a list of elements whose nesting matches the tile shape. The tile type "
            "fixes rank, shape and element type."
        ),
        examples=("%c = constant <i32: [0, 1, 2, 3]> : tile<4xi32>",),
    ),
    OpDef(
        "entry",
        0x16,
        "13.1",
        summary="Kernel definition",
        group="core",
        attributes=(
            AttrDef("sym_name", "symbol", doc="kernel name, unique in the module"),
            AttrDef("function_type", "function_type", doc="argument types (no results)"),
            AttrDef(
                "arg_attrs",
                "array",
                optional=True,
                doc="per-argument attribute dictionaries (none are supported yet)",
            ),
            AttrDef(
                "res_attrs",
                "array",
                optional=True,
                doc="per-result attribute dictionaries (none are supported yet)",
            ),
            AttrDef(
                "optimization_hints",
                "optimization_hints",
                optional=True,
                doc="per-architecture hints for the kernel",
            ),
        ),
        regions=(RegionDef("body", doc="kernel body"),),
        assembly=None,
        traits=frozenset(
            {
                "FunctionOpInterface",
                "IsolatedFromAbove",
                "SingleBlock",
                "SingleBlockImplicitTerminator:ReturnOp",
            }
        ),
        description=(
            "Defines a kernel: a named function, isolated from above, with a single body block and "
            "no results, which the host launches over a 3-D grid of tile blocks. "
            "`optimization_hints` may carry per-architecture settings such as num_cta_in_cga or "
            "num_worker_warps_per_cta."
        ),
        examples=("entry @kernel(%a: tile<ptr<f32>>) {\n  return\n}",),
    ),
    OpDef(
        "extract",
        0x26,
        "13.1",
        summary="Extract one slice of a tile",
        group="core",
        operands=(
            OperandDef("source", "tile", doc="tile to slice"),
            OperandDef(
                "indices",
                "scalar_i32_tile",
                "variadic",
                doc="slice number along each dimension (scalar i32 tiles)",
            ),
        ),
        results=(ResultDef("result", "tile", doc="the selected slice"),),
        assembly=(
            "$source `[` $indices `]` attr-dict `:` custom<CudaTileType>(type($source)) `->` "
            "custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_rank", ("source", "result")),),
        description=(
            "Cuts `source` into equal slices of the result's shape (which must divide the source "
            "shape) and returns the slice numbered by `indices`; these count slices, not elements. "
            "Indices are read as unsigned and an out-of-range slice is undefined."
        ),
        examples=("%r = extract %t[%i, %j] : tile<32x8xf32> -> tile<4x2xf32>",),
    ),
    OpDef(
        "insert",
        0x76,
        "13.4",
        summary="Replace one slice of a tile",
        group="core",
        operands=(
            OperandDef("source", "tile", since="13.4", doc="the new slice"),
            OperandDef("destination", "tile", since="13.4", doc="tile to update"),
            OperandDef(
                "indices",
                "scalar_i32_tile",
                "variadic",
                since="13.4",
                doc="slice number along each dimension (scalar i32 tiles)",
            ),
        ),
        results=(ResultDef("result", "tile", since="13.4", doc="`destination` with the slice replaced"),),
        assembly=(
            "$source `,` $destination `[` $indices `]` attr-dict `:` custom<CudaTileType>(type($source)) `,` "
            "custom<CudaTileType>(type($destination))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_type", ("destination", "result")),
            ("same_rank", ("source", "destination")),
            ("same_element_type", ("source", "destination")),
        ),
        description=(
            "The inverse of `extract`: cuts `destination` into equal slices of `source`'s shape "
            "(which must divide it) and returns it with the slice numbered by `indices` replaced "
            "by `source`. Indices count slices, not elements, and are read as unsigned; an "
            "out-of-range slice is undefined. Bytecode 13.4+ (cuTile Python's `ct.insert`)."
        ),
        examples=("%r = insert %s, %t[%i, %j] : tile<2x4xf32>, tile<4x8xf32>",),
    ),
    OpDef(
        "get_global",
        0x2C,
        "13.1",
        summary="Pointer to a module-level global",
        group="core",
        attributes=(AttrDef("name", "symbol_ref", doc="symbol of the global"),),
        results=(ResultDef("result", "scalar_pointer_tile", doc="pointer to the global's storage"),),
        assembly="$name attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure", "SymbolUserOpInterface"}),
        description=(
            "Returns a scalar tile holding a pointer to the first element of the `global` named by "
            "`name`; the pointee type is the global's element type."
        ),
        examples=("%p = get_global @table : tile<ptr<f32>>",),
    ),
    OpDef(
        "get_num_tile_blocks",
        0x2E,
        "13.1",
        summary="Number of tile blocks in the launch grid",
        group="core",
        results=(
            ResultDef("gridSize_x", "scalar_i32_tile", doc="grid extent along x"),
            ResultDef("gridSize_y", "scalar_i32_tile", doc="grid extent along y"),
            ResultDef("gridSize_z", "scalar_i32_tile", doc="grid extent along z"),
        ),
        assembly="attr-dict `:` custom<CudaTileType>(type($gridSize_x))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("gridSize_x", "gridSize_y", "gridSize_z")),),
        description=(
            "Returns the grid extent along x, y and z as three scalar i32 tiles; dimensions not "
            "given at launch read as 1. Extents above 2^24-1 per axis are not supported."
        ),
        examples=("%x, %y, %z = get_num_tile_blocks : tile<i32>",),
    ),
    OpDef(
        "get_tile_block_id",
        0x30,
        "13.1",
        summary="Coordinates of the running tile block",
        group="core",
        results=(
            ResultDef("blockId_x", "scalar_i32_tile", doc="block index along x"),
            ResultDef("blockId_y", "scalar_i32_tile", doc="block index along y"),
            ResultDef("blockId_z", "scalar_i32_tile", doc="block index along z"),
        ),
        assembly="attr-dict `:` custom<CudaTileType>(type($blockId_x))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("blockId_x", "blockId_y", "blockId_z")),),
        description=(
            "Returns the x, y and z index of the executing tile block as three scalar i32 tiles, "
            "each in [0, get_num_tile_blocks) along its axis and 0 for axes the launch did not use."
        ),
        examples=("%x, %y, %z = get_tile_block_id : tile<i32>",),
    ),
    OpDef(
        "global",
        0x31,
        "13.1",
        summary="Statically allocated global memory",
        group="core",
        attributes=(
            AttrDef("sym_name", "symbol", doc="name of the global"),
            AttrDef("value", "dense_elements", doc="initial contents"),
            AttrDef(
                "alignment",
                "i64",
                default="0",
                doc="byte alignment of the buffer (0 = default)",
            ),
            AttrDef(
                "constant",
                "unit",
                optional=True,
                since="13.3",
                doc="the buffer is never written",
            ),
            AttrDef(
                "symbol_visibility",
                "enum:symbol_visibility",
                default="public",
                since="13.3",
                doc="public (default) or private",
            ),
        ),
        assembly=(
            "custom<SymbolVisibility>($symbol_visibility) (`constant` $constant^)? $sym_name "
            "(`alignment` `=` $alignment^)? attr-dict "
            "custom<DenseTypedElementsAttrNoResult>($value)"
        ),
        traits=frozenset({"Symbol"}),
        description=(
            "Declares a mutable 1-D buffer named `sym_name` at module scope, initialised from "
            "`value` when the module is loaded and alive as long as the module. `alignment` gives "
            "its byte alignment, `constant` (13.3) makes it read-only and `symbol_visibility` "
            "(13.3, default public) keeps private globals away from the host."
        ),
        examples=("global @table alignment = 128 <f32: [0.1, 0.2, 0.3, 0.4]> : tile<4xf32>",),
    ),
    OpDef(
        "iota",
        0x3A,
        "13.1",
        summary="1-D tile holding 0, 1, ..., n-1",
        group="core",
        results=(ResultDef("result", "int_tile", doc="the sequence 0 .. n-1"),),
        assembly="attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        description=(
            "Produces a rank-1 integer tile whose i-th element is i. The values are unsigned and "
            "the tile length must fit in the element type."
        ),
        examples=("%r = iota : tile<8xi32>",),
    ),
    OpDef(
        "module",
        0x4B,
        "13.1",
        summary="Top-level container of kernels and globals",
        group="core",
        attributes=(
            AttrDef("sym_name", "symbol", doc="module name"),
            AttrDef(
                "producer",
                "string",
                optional=True,
                since="13.3",
                doc="free-form text naming the producing tool",
            ),
        ),
        regions=(RegionDef("body", doc="the module's items"),),
        assembly="$sym_name attr-dict-with-keyword $body",
        traits=frozenset(
            {
                "IsolatedFromAbove",
                "NoRegionArguments",
                "SingleBlock",
                "SymbolTable",
                "NoTerminator",
                "HasOnlyGraphRegion",
            }
        ),
        description=(
            "A named compilation unit whose single block holds `entry` kernels and `global` "
            "variables (a graph region without terminator) and only cuda_tile operations. "
            "`producer` (13.3) records the tool that generated it."
        ),
        examples=("cuda_tile.module @m {\n  entry @k() {\n    return\n  }\n}",),
    ),
    OpDef(
        "offset",
        0x51,
        "13.1",
        summary="Advance pointers by element counts",
        group="core",
        operands=(
            OperandDef("ptr", "pointer_tile", doc="base pointers"),
            OperandDef("offset", "int_tile", doc="element offsets, read as signed"),
        ),
        results=(ResultDef("result", "pointer_tile", doc="advanced pointers"),),
        assembly=(
            "$ptr `,` $offset attr-dict `:` custom<CudaTileType>(type($ptr)) `,` "
            "custom<CudaTileType>(type($offset)) `->` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure", "Elementwise"}),
        # AllTypesMatch (an ODS predicate) is checked before the native SameOperandsAndResultShape.
        type_rules=(
            ("same_type", ("result", "ptr")),
            ("same_operands_and_result_shape", ()),
        ),
        description=(
            "Adds `offset[i]` elements, scaled by the pointee's storage size, to each pointer of "
            "`ptr`. Offsets are signed; overflow of the scaled offset (signed) or of the address "
            "(unsigned) is undefined."
        ),
        examples=("%q = offset %p, %o : tile<8xptr<f32>>, tile<8xi32> -> tile<8xptr<f32>>",),
    ),
    OpDef(
        "pack",
        0x6F,
        "13.3",
        summary="Reinterpret a 1-D numeric tile as bytes",
        group="core",
        operands=(OperandDef("source", "number_or_i4_tile", since="13.3", doc="rank-1 numeric tile"),),
        results=(ResultDef("result", "i8_tile", since="13.3", doc="rank-1 i8 tile of the same bytes"),),
        assembly=("$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_rank", ("source", "result")),),
        description=(
            "Reinterprets a rank-1 numeric tile as a rank-1 i8 tile holding exactly the same "
            "bytes. Unlike `bitcast` it works on the whole tile, so element counts differ; 8-bit "
            "inputs are rejected. Added in 13.3."
        ),
        examples=("%b = pack %x : tile<64xf16> -> tile<128xi8>",),
    ),
    OpDef(
        "permute",
        0x53,
        "13.1",
        summary="Reorder the dimensions of a tile",
        group="core",
        operands=(OperandDef("source", "tile", doc="tile to transpose"),),
        attributes=(
            AttrDef(
                "permutation",
                "dense_i32_array",
                doc="source dimension for each result dimension",
            ),
        ),
        results=(ResultDef("result", "tile", doc="transposed tile"),),
        assembly=(
            "$source $permutation attr-dict `:` custom<CudaTileType>(type($source)) `->` "
            "custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_element_type", ("source", "result")),
            ("same_rank", ("source", "result")),
        ),
        description=(
            "Transposes `source` so that result dimension i is source dimension `permutation[i]`; "
            "only the indexing changes."
        ),
        examples=("%r = permute %x [2, 0, 1] : tile<2x4x8xf16> -> tile<8x2x4xf16>",),
    ),
    OpDef(
        "reduce",
        0x58,
        "13.1",
        summary="Reduce tiles along one dimension with a custom combiner",
        group="core",
        operands=(OperandDef("operands", "tile", "variadic", doc="tiles to reduce (same shape)"),),
        attributes=(
            AttrDef("dim", "i32", doc="dimension to reduce"),
            AttrDef("identities", "array", doc="neutral element for each operand"),
        ),
        results=(ResultDef("results", "tile", "variadic", doc="reduced tiles"),),
        regions=(
            RegionDef(
                "body",
                doc="combiner: (element, accumulator) pairs in, new accumulators out",
            ),
        ),
        assembly=(
            "$operands attr-dict ` ` `dim` `` `=` `` $dim `identities` `` `=` `` $identities `:` "
            "custom<CudaTileType>(type($operands)) `->` custom<CudaTileType>(type($results)) "
            "custom<ArgumentRegion>($body)"
        ),
        traits=frozenset({"RecursiveMemoryEffects", "SingleBlockImplicitTerminator:YieldOp"}),
        type_rules=(("same_operands_shape", ()),),
        description=(
            "Folds each operand along `dim` with the associative function in `body`, removing that "
            "dimension. The body receives an (element, accumulator) pair of rank-0 tiles per "
            "operand and yields the new accumulators; `identities` holds each operand's neutral "
            "value. Only pure ops may appear in the body."
        ),
        examples=(
            (
                "%s = reduce %x dim=0 identities=[0.000000e+00 : f32] : tile<8xf32> -> "
                "tile<f32>\n(%e: tile<f32>, %acc: tile<f32>) {\n  %n = addf %e, %acc : tile<f32>\n "
                " yield %n : tile<f32>\n}"
            ),
        ),
    ),
    OpDef(
        "reshape",
        0x5B,
        "13.1",
        summary="Change the shape of a tile",
        group="core",
        operands=(OperandDef("source", "tile", doc="tile to reshape"),),
        results=(ResultDef("result", "tile", doc="same elements, new shape"),),
        assembly=("$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_operands_and_result_element_type", ()),),
        description=(
            "Re-indexes `source` into the result shape, reading and writing elements in row-major "
            "order. The element count and type stay the same."
        ),
        examples=("%r = reshape %x : tile<8x2xf32> -> tile<2x2x4xf32>",),
    ),
    OpDef(
        "scan",
        0x5E,
        "13.1",
        summary="Inclusive prefix scan with a custom combiner",
        group="core",
        operands=(OperandDef("operands", "tile", "variadic", doc="tiles to scan (same shape)"),),
        attributes=(
            AttrDef("dim", "i32", doc="dimension to scan along"),
            AttrDef("reverse", "bool", doc="scan from the highest index down"),
            AttrDef("identities", "array", doc="initial accumulator per operand"),
        ),
        results=(
            ResultDef(
                "results",
                "tile",
                "variadic",
                doc="prefix results, same shapes as the operands",
            ),
        ),
        regions=(
            RegionDef(
                "body",
                doc="combiner: (accumulator, element) pairs in, new accumulators out",
            ),
        ),
        assembly=(
            "$operands attr-dict ` ` `dim` `` `=` `` $dim `reverse` `` `=` `` $reverse "
            "`identities` `` `=` `` $identities `:` custom<CudaTileType>(type($operands)) `->` "
            "custom<CudaTileType>(type($results)) custom<ArgumentRegion>($body)"
        ),
        traits=frozenset({"RecursiveMemoryEffects", "SingleBlockImplicitTerminator:YieldOp"}),
        type_rules=(("same_operands_shape", ()),),
        description=(
            "Computes the running combination of each operand along `dim` with the associative "
            "function in `body`, keeping every intermediate value; `reverse = true` runs from the "
            "last index down. `identities` seeds the accumulators, and currently a single operand "
            "is supported."
        ),
        examples=(
            (
                "%r = scan %x dim=1 reverse=false identities=[1.0 : f32] : tile<8x16xf32> -> "
                "tile<8x16xf32>\n(%acc: tile<f32>, %e: tile<f32>) {\n  %p = mulf %acc, %e : "
                "tile<f32>\n  yield %p : tile<f32>\n}"
            ),
        ),
    ),
    OpDef(
        "select",
        0x5F,
        "13.1",
        summary="Element-wise choice between two tiles",
        group="core",
        operands=(
            OperandDef("cond", "i1_tile", doc="i1 selector tile"),
            OperandDef("val_if_true", "tile", doc="values taken where cond is 1"),
            OperandDef("val_if_false", "tile", doc="values taken where cond is 0"),
        ),
        results=(ResultDef("result", "tile", doc="selected values"),),
        assembly=(
            "$cond `,` $val_if_true `,` $val_if_false attr-dict `:` "
            "custom<CudaTileType>(type($cond)) `,` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_type", ("val_if_true", "val_if_false", "result")),
            ("same_shape", ("cond", "val_if_true", "val_if_false", "result")),
        ),
        description=(
            "Takes the element of `val_if_true` where `cond` is 1 and of `val_if_false` where it "
            "is 0. All tiles have the same shape and the two value tiles share the result type."
        ),
        examples=("%r = select %c, %a, %b : tile<4xi1>, tile<4xf32>",),
    ),
    OpDef(
        "unpack",
        0x70,
        "13.3",
        summary="Reinterpret bytes as a 1-D numeric tile",
        group="core",
        operands=(OperandDef("source", "i8_tile", since="13.3", doc="rank-1 i8 tile"),),
        results=(
            ResultDef(
                "result",
                "number_or_i4_tile",
                since="13.3",
                doc="rank-1 tile of the same bytes",
            ),
        ),
        assembly=("$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_rank", ("source", "result")),),
        description=(
            "Reinterprets a rank-1 i8 tile as a rank-1 tile of another numeric element type "
            "holding the same bytes; the inverse of `pack`. 8-bit results are rejected. Added in "
            "13.3."
        ),
        examples=("%x = unpack %b : tile<64xi8> -> tile<32xf16>",),
    ),
)

# ================================================================================================
# Control flow: structured regions and their terminators
# ================================================================================================

_CONTROL_FLOW: tuple[OpDef, ...] = (
    OpDef(
        "assert",
        0x05,
        "13.1",
        summary="Report an error where a condition tile is false",
        group="control-flow",
        operands=(OperandDef("condition", "i1_tile", doc="i1 tile that should be all ones"),),
        attributes=(AttrDef("message", "string", doc="text printed on failure"),),
        assembly="$condition `,` $message attr-dict `:` custom<CudaTileType>(type($condition))",
        description=(
            "For every zero element of the i1 tile `condition`, prints `message` with that "
            "element's index and signals an error to the host; the kernel may keep running. Meant "
            "for debugging only."
        ),
        examples=('assert %ok, "index out of range" : tile<i1>',),
    ),
    OpDef(
        "break",
        0x0A,
        "13.1",
        summary="Leave the innermost loop",
        group="control-flow",
        operands=(
            OperandDef(
                "operands",
                "cuda_tile_any",
                "variadic",
                doc="values that become the loop's results",
            ),
        ),
        assembly="attr-dict ($operands^ `:` custom<CudaTileType>(type($operands)))?",
        traits=frozenset({"ReturnLike", "Terminator", "ParentOneOf:IfOp,LoopOp"}),
        description=(
            "Terminates the enclosing `loop`, also from inside nested `if`s, passing `operands` as the loop's results."
        ),
        examples=("break %v : tile<f32>",),
    ),
    OpDef(
        "continue",
        0x11,
        "13.1",
        summary="Start the next loop iteration",
        group="control-flow",
        operands=(
            OperandDef(
                "operands",
                "cuda_tile_any",
                "variadic",
                doc="next values of the loop-carried variables",
            ),
        ),
        assembly="attr-dict ($operands^ `:` custom<CudaTileType>(type($operands)))?",
        traits=frozenset({"Terminator", "ParentOneOf:ForOp,IfOp,LoopOp"}),
        description=(
            "Ends the current iteration of the innermost `for` or `loop`, also from inside nested "
            "`if`s, passing `operands` as the next loop-carried values. It is the implicit "
            "terminator of a `for` body."
        ),
        examples=("continue %v : tile<f32>",),
    ),
    OpDef(
        "for",
        0x29,
        "13.1",
        summary="Counted loop over an integer range",
        group="control-flow",
        operands=(
            OperandDef("lowerBound", "scalar_int_tile", doc="first induction value"),
            OperandDef("upperBound", "scalar_int_tile", doc="exclusive upper bound"),
            OperandDef("step", "scalar_int_tile", doc="increment, must be positive"),
            OperandDef("initValues", "any", "variadic", doc="initial loop-carried values"),
        ),
        attributes=(
            AttrDef(
                "unsignedCmp",
                "unit",
                optional=True,
                since="13.2",
                doc="compare the induction variable as unsigned",
            ),
        ),
        results=(ResultDef("resultValues", "any", "variadic", doc="final loop-carried values"),),
        regions=(RegionDef("region", doc="loop body"),),
        assembly=None,
        traits=frozenset(
            {
                "AutomaticAllocationScope",
                "RecursiveMemoryEffects",
                "SingleBlockImplicitTerminator:ContinueOp",
            }
        ),
        type_rules=(
            ("same_type", ("lowerBound", "upperBound", "step")),
            ("same_type", ("initValues", "resultValues")),
        ),
        description=(
            "Runs the body with iv = lowerBound, lowerBound + step, ... while iv < upperBound; the "
            "bounds and the positive step are scalar integer tiles of one type, compared as signed "
            "unless written `for unsigned` (the `unsignedCmp` flag, 13.2). Loop-carried values "
            "start from `initValues`, are replaced by each `continue`, and their final values are "
            "the results."
        ),
        examples=(
            (
                "%s = for %iv in (%lb to %ub, step %st) : tile<i32> iter_values(%acc = %init) -> "
                "(tile<f32>) {\n  continue %acc : tile<f32>\n}"
            ),
        ),
    ),
    OpDef(
        "if",
        0x32,
        "13.1",
        summary="Conditional execution of a region",
        group="control-flow",
        operands=(OperandDef("condition", "scalar_i1_tile", doc="scalar i1 tile"),),
        results=(ResultDef("results", "any", "variadic", doc="values yielded by the branch taken"),),
        regions=(
            RegionDef("thenRegion", doc="runs when the condition is true"),
            RegionDef("elseRegion", doc="runs otherwise; may be empty"),
        ),
        assembly=(
            "$condition (`->` `(` custom<CudaTileType>(type($results))^ `)`)? "
            "custom<IfOpRegion>($thenRegion) (`else` custom<IfOpRegion>($elseRegion)^)? attr-dict"
        ),
        traits=frozenset(
            {
                "NoRegionArguments",
                "RecursiveMemoryEffects",
                "SingleBlockImplicitTerminator:YieldOp",
            }
        ),
        description=(
            "Runs `thenRegion` when the scalar i1 `condition` is true and the optional "
            "`elseRegion` otherwise. When results are declared, both branches must end in `yield` "
            "with values of those types; results may not be views."
        ),
        examples=(("%r = if %c -> (tile<f32>) {\n  yield %a : tile<f32>\n} else {\n  yield %b : tile<f32>\n}"),),
    ),
    OpDef(
        "loop",
        0x41,
        "13.1",
        summary="Loop that runs until a break",
        group="control-flow",
        operands=(OperandDef("initValues", "any", "variadic", doc="initial loop-carried values"),),
        results=(ResultDef("resultValues", "any", "variadic", doc="values passed to `break`"),),
        regions=(RegionDef("region", doc="loop body"),),
        assembly=None,
        traits=frozenset(
            {
                "AutomaticAllocationScope",
                "RecursiveMemoryEffects",
                "SingleBlockImplicitTerminator:ContinueOp",
            }
        ),
        description=(
            "Repeats its body indefinitely; every path ends in `continue` (next iteration with new "
            "carried values) or `break` (leave with the results). Carried values start from "
            "`initValues` and the result types may differ from the carried ones."
        ),
        examples=(("%r = loop iter_values(%v = %init) : tile<i32> -> tile<i32> {\n  break %v : tile<i32>\n}"),),
    ),
    OpDef(
        "return",
        0x5C,
        "13.1",
        summary="Return from a kernel",
        group="control-flow",
        operands=(OperandDef("operands", "any", "variadic", doc="returned values (none for kernels)"),),
        assembly="attr-dict ($operands^ `:` custom<CudaTileType>(type($operands)))?",
        traits=frozenset({"ParentOneOf:EntryOp,IfOp,Test_FuncOp", "ReturnLike", "Terminator"}),
        description=(
            "Ends the execution of the enclosing `entry` (kernels return no values). It may appear "
            "inside `if`, but not directly in a loop body."
        ),
        examples=("return",),
    ),
    OpDef(
        "yield",
        0x6D,
        "13.1",
        summary="Hand values from a region back to its parent",
        group="control-flow",
        operands=(
            OperandDef(
                "operands",
                "cuda_tile_any",
                "variadic",
                doc="values passed to the parent op",
            ),
        ),
        assembly="attr-dict ($operands^ `:` custom<CudaTileType>(type($operands)))?",
        traits=frozenset({"Pure", "ReturnLike", "Terminator", "ParentOneOf:IfOp,ReduceOp,ScanOp"}),
        description=(
            "Terminates the body of an `if`, `reduce` or `scan`, passing `operands` to the parent "
            "op. Loops use `continue` and `break` instead."
        ),
        examples=("yield %x : tile<f32>",),
    ),
)

# ================================================================================================
# Floating point: element-wise arithmetic, math functions and matrix multiply
# ================================================================================================

_FLOATING_POINT: tuple[OpDef, ...] = (
    OpDef(
        "absf",
        0x00,
        "13.1",
        summary="Absolute value of each float element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_operands_and_result_shape", ()),
            ("same_type", ("source", "result")),
        ),
        description=(
            "Replaces every element of `source` by its magnitude (the sign is cleared). The "
            "operand and the result have the same f16, bf16, f32 or f64 tile type."
        ),
        examples=("%r = absf %x : tile<4xf32>",),
    ),
    OpDef(
        "addf",
        0x02,
        "13.1",
        summary="Add two float tiles element by element",
        group="floating-point",
        operands=(
            OperandDef("lhs", "base_float_tile", doc="left operand"),
            OperandDef("rhs", "base_float_tile", doc="right operand"),
        ),
        attributes=(
            AttrDef(
                "rounding_mode",
                "enum:rounding",
                doc="rounding applied to each result element",
            ),
            AttrDef(
                "flush_to_zero",
                "unit",
                optional=True,
                doc="flush subnormal inputs and results to signed zero (f32 only)",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the operands"),),
        assembly=(
            "$lhs `,` $rhs custom<IEEERoundingMode>($rounding_mode) (`flush_to_zero` "
            "$flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Adds `lhs` and `rhs` element by element; both operands and the result share one f16, "
            "bf16, f32 or f64 tile type. `rounding<...>` picks an IEEE rounding direction "
            "(nearest_even when absent) and `flush_to_zero`, accepted for f32 only, flushes "
            "subnormals."
        ),
        examples=("%r = addf %a, %b : tile<4xf32>",),
    ),
    OpDef(
        "atan2",
        0x6E,
        "13.2",
        summary="Two-argument arctangent of each element pair",
        group="floating-point",
        operands=(
            OperandDef("x", "base_float_tile", since="13.2", doc="numerator tile (first argument)"),
            OperandDef(
                "y",
                "base_float_tile",
                since="13.2",
                doc="denominator tile (second argument)",
            ),
        ),
        results=(
            ResultDef(
                "result",
                "base_float_tile",
                since="13.2",
                doc="angles in radians, same type as the inputs",
            ),
        ),
        assembly="$x `,` $y attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("x", "y", "result")),),
        description=(
            "Computes, per element, the principal angle whose tangent is `x / y`, using the signs "
            "of both inputs to pick the quadrant. Operands and result share one f16, bf16, f32 or "
            "f64 tile type; half-precision inputs are evaluated in f32. Added in 13.2."
        ),
        examples=("%r = atan2 %x, %y : tile<4xf32>",),
    ),
    OpDef(
        "ceil",
        0x0D,
        "13.1",
        summary="Round each float element up to an integral value",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=(
            "Rounds every element of `source` toward positive infinity, i.e. to the smallest "
            "integral value that is not below it. The result keeps the float tile type."
        ),
        examples=("%r = ceil %x : tile<f32>",),
    ),
    OpDef(
        "cmpf",
        0x0E,
        "13.1",
        summary="Element-wise float comparison yielding an i1 tile",
        group="floating-point",
        operands=(
            OperandDef("lhs", "base_float_tile", doc="left operand"),
            OperandDef("rhs", "base_float_tile", doc="right operand"),
        ),
        attributes=(
            AttrDef("comparison_predicate", "enum:comparison_predicate", doc="relation to test"),
            AttrDef(
                "comparison_ordering",
                "enum:comparison_ordering",
                doc="how NaN operands compare",
            ),
        ),
        results=(ResultDef("result", "i1_tile", doc="1 where the relation holds, else 0"),),
        assembly=(
            "custom<ComparisonPredicate>($comparison_predicate) "
            "custom<ComparisonOrdering>($comparison_ordering) $lhs `,` $rhs attr-dict `:` "
            "custom<CudaTileType>(type($lhs)) `->` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_type", ("lhs", "rhs")),
            ("i1_same_shape", ("lhs", "result")),
        ),
        description=(
            "Tests `comparison_predicate` (equal, less_than, ...) between matching elements of "
            "`lhs` and `rhs`, which share one float tile type, and returns an i1 tile of the same "
            "shape. `comparison_ordering` fixes the NaN case: `ordered` tests are false and "
            "`unordered` tests true when either element is NaN."
        ),
        examples=("%m = cmpf less_than ordered %a, %b : tile<4xf32> -> tile<4xi1>",),
    ),
    OpDef(
        "cos",
        0x12,
        "13.1",
        summary="Cosine of each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=(
            "Computes the cosine of every element of `source` (in radians). f16 and bf16 inputs are evaluated in f32."
        ),
        examples=("%r = cos %x : tile<4xf32>",),
    ),
    OpDef(
        "cosh",
        0x13,
        "13.1",
        summary="Hyperbolic cosine of each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=("Computes cosh(x) for every element of `source`; half-precision inputs are evaluated in f32."),
        examples=("%r = cosh %x : tile<4xf32>",),
    ),
    OpDef(
        "divf",
        0x14,
        "13.1",
        summary="Divide two float tiles element by element",
        group="floating-point",
        operands=(
            OperandDef("lhs", "base_float_tile", doc="dividend"),
            OperandDef("rhs", "base_float_tile", doc="divisor"),
        ),
        attributes=(
            AttrDef(
                "rounding_mode",
                "enum:rounding",
                doc="rounding applied to each result element",
            ),
            AttrDef(
                "flush_to_zero",
                "unit",
                optional=True,
                doc="flush subnormal inputs and results to signed zero (f32 only)",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="quotient, same type as the operands"),),
        assembly=(
            "$lhs `,` $rhs custom<DivFOpRoundingMode>($rounding_mode) (`flush_to_zero` "
            "$flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Divides `lhs` by `rhs` element by element on f16, bf16, f32 or f64 tiles. Besides the "
            "four IEEE directions, f32 accepts `rounding<approx>` (a fast multiply-by-reciprocal) "
            "and `rounding<full>` (a full-range approximation within 2 ulp); `flush_to_zero` is "
            "f32 only."
        ),
        examples=("%r = divf %a, %b rounding<approx> : tile<4xf32>",),
    ),
    OpDef(
        "exp",
        0x17,
        "13.1",
        summary="e raised to each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        attributes=(
            AttrDef(
                "rounding_mode",
                "enum:rounding",
                default="full",
                since="13.3",
                doc="`full` (default) or `approx`",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly=(
            "$source custom<ExpOpRoundingMode>($rounding_mode) attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=(
            "Computes e raised to each element of `source`. The rounding mode defaults to `full` "
            "(math-library accuracy); `rounding<approx>` selects a fast exp2-based approximation "
            "for f32. The `rounding_mode` attribute exists since 13.3."
        ),
        examples=("%r = exp %x rounding<approx> : tile<4xf32>",),
    ),
    OpDef(
        "exp2",
        0x18,
        "13.1",
        summary="2 raised to each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        attributes=(
            AttrDef(
                "flush_to_zero",
                "unit",
                optional=True,
                doc="flush subnormal inputs and results to signed zero (f32 only)",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly=("$source (`flush_to_zero` $flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=(
            "Computes 2 raised to each element of `source`. `flush_to_zero` flushes subnormal "
            "inputs and results (f32 only)."
        ),
        examples=("%r = exp2 %x : tile<4xf32>",),
    ),
    OpDef(
        "floor",
        0x27,
        "13.1",
        summary="Round each float element down to an integral value",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=(
            "Rounds every element of `source` toward negative infinity, i.e. to the largest "
            "integral value not above it. The result keeps the float tile type."
        ),
        examples=("%r = floor %x : tile<f32>",),
    ),
    OpDef(
        "fma",
        0x28,
        "13.1",
        summary="Fused multiply-add of three float tiles",
        group="floating-point",
        operands=(
            OperandDef("lhs", "base_float_tile", doc="first factor"),
            OperandDef("rhs", "base_float_tile", doc="second factor"),
            OperandDef("acc", "base_float_tile", doc="addend"),
        ),
        attributes=(
            AttrDef(
                "rounding_mode",
                "enum:rounding",
                doc="rounding applied to each result element",
            ),
            AttrDef(
                "flush_to_zero",
                "unit",
                optional=True,
                doc="flush subnormal inputs and results to signed zero (f32 only)",
            ),
        ),
        results=(
            ResultDef(
                "result",
                "base_float_tile",
                doc="lhs * rhs + acc, same type as the operands",
            ),
        ),
        assembly=(
            "$lhs `,` $rhs `,` $acc custom<IEEERoundingMode>($rounding_mode) (`flush_to_zero` "
            "$flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "acc", "result")),),
        description=(
            "Computes `lhs * rhs + acc` per element with a single rounding step. All three "
            "operands and the result have the same f16, bf16, f32 or f64 tile type; "
            "`rounding<...>` chooses an IEEE direction and `flush_to_zero` applies to f32."
        ),
        examples=("%r = fma %a, %b, %c : tile<4xf32>",),
    ),
    OpDef(
        "log",
        0x3F,
        "13.1",
        summary="Natural logarithm of each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=("Computes ln(x) for every element of `source`; half-precision inputs are evaluated in f32."),
        examples=("%r = log %x : tile<4xf32>",),
    ),
    OpDef(
        "log2",
        0x40,
        "13.1",
        summary="Base-2 logarithm of each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=("Computes log2(x) for every element of `source`; half-precision inputs are evaluated in f32."),
        examples=("%r = log2 %x : tile<4xf32>",),
    ),
    OpDef(
        "maxf",
        0x45,
        "13.1",
        summary="Larger of two float tiles, per element",
        group="floating-point",
        operands=(
            OperandDef("lhs", "base_float_tile", doc="left operand"),
            OperandDef("rhs", "base_float_tile", doc="right operand"),
        ),
        attributes=(
            AttrDef(
                "propagate_nan",
                "unit",
                optional=True,
                doc="return NaN when either element is NaN",
            ),
            AttrDef(
                "flush_to_zero",
                "unit",
                optional=True,
                doc="flush subnormal inputs and results to signed zero (f32 only)",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the operands"),),
        assembly=(
            "$lhs `,` $rhs oilist(`flush_to_zero` $flush_to_zero | `propagate_nan` $propagate_nan) "
            "attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Returns the larger of each pair of elements, with +0 ordered above -0. Without "
            "`propagate_nan` a NaN loses against a number (IEEE maximumNumber); with it, any NaN "
            "input gives NaN (IEEE maximum). `flush_to_zero` applies to f32 only."
        ),
        examples=("%r = maxf %a, %b propagate_nan : tile<4xf32>",),
    ),
    OpDef(
        "minf",
        0x47,
        "13.1",
        summary="Smaller of two float tiles, per element",
        group="floating-point",
        operands=(
            OperandDef("lhs", "base_float_tile", doc="left operand"),
            OperandDef("rhs", "base_float_tile", doc="right operand"),
        ),
        attributes=(
            AttrDef(
                "propagate_nan",
                "unit",
                optional=True,
                doc="return NaN when either element is NaN",
            ),
            AttrDef(
                "flush_to_zero",
                "unit",
                optional=True,
                doc="flush subnormal inputs and results to signed zero (f32 only)",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the operands"),),
        assembly=(
            "$lhs `,` $rhs oilist(`flush_to_zero` $flush_to_zero | `propagate_nan` $propagate_nan) "
            "attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Returns the smaller of each pair of elements, with -0 ordered below +0. Without "
            "`propagate_nan` a NaN loses against a number (IEEE minimumNumber); with it, any NaN "
            "input gives NaN (IEEE minimum). `flush_to_zero` applies to f32 only."
        ),
        examples=("%r = minf %a, %b : tile<4xf32>",),
    ),
    OpDef(
        "mmaf",
        0x49,
        "13.1",
        summary="Floating-point matrix multiply-accumulate",
        group="floating-point",
        operands=(
            OperandDef("lhs", "mmaf_operand_tile", doc="left matrix (MxK or BxMxK)"),
            OperandDef("rhs", "mmaf_operand_tile", doc="right matrix (KxN or BxKxN)"),
            OperandDef("acc", "mmaf_acc_tile", doc="accumulator (MxN or BxMxN)"),
        ),
        attributes=(
            AttrDef(
                "fast_acc",
                "unit",
                optional=True,
                since="13.3",
                doc="allow the fast native FP8 accumulation",
            ),
        ),
        results=(ResultDef("result", "mmaf_acc_tile", doc="lhs x rhs + acc, same type as acc"),),
        assembly=(
            "$lhs `,` $rhs `,` $acc (`fast_acc` $fast_acc^)? attr-dict `:` "
            "custom<CudaTileType>(type($lhs)) `,` custom<CudaTileType>(type($rhs)) `,` "
            "custom<CudaTileType>(type($acc))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_type", ("acc", "result")),
            ("same_element_type", ("lhs", "rhs")),
            ("same_rank", ("lhs", "rhs", "acc")),
        ),
        description=(
            "Computes `lhs x rhs + acc` on 2-D tiles (MxK, KxN, MxN) or batched 3-D tiles (BxMxK, "
            "BxKxN, BxMxN). `lhs` and `rhs` share one element type (f8E4M3FN, f8E5M2, f16, bf16, "
            "tf32, f32 or f64) and the accumulator, which has the result's type, is f16, f32 or "
            "f64 as that input type allows. `fast_acc` (13.3) permits Hopper's faster, less "
            "precise FP8 accumulation."
        ),
        examples=("%r = mmaf %a, %b, %c : tile<4x8xf16>, tile<8x2xf16>, tile<4x2xf32>",),
    ),
    OpDef(
        "mmaf_scaled",
        0x72,
        "13.3",
        summary="Block-scaled low-precision matrix multiply-accumulate",
        group="floating-point",
        operands=(
            OperandDef("lhs", "mmaf_scaled_operand_tile", since="13.3", doc="left matrix"),
            OperandDef("rhs", "mmaf_scaled_operand_tile", since="13.3", doc="right matrix"),
            OperandDef("acc", "mmaf_scaled_result_tile", since="13.3", doc="f32 accumulator"),
            OperandDef(
                "lhs_scale",
                "mmaf_scaled_scale_tile",
                since="13.3",
                doc="block scale factors for lhs",
            ),
            OperandDef(
                "rhs_scale",
                "mmaf_scaled_scale_tile",
                since="13.3",
                doc="block scale factors for rhs",
            ),
        ),
        results=(
            ResultDef(
                "result",
                "mmaf_scaled_result_tile",
                since="13.3",
                doc="scaled product plus acc, same type as acc",
            ),
        ),
        assembly=(
            "$lhs `,` $rhs `,` $acc `,` $lhs_scale `,` $rhs_scale attr-dict `:` "
            "custom<CudaTileType>(type($lhs)) `,` custom<CudaTileType>(type($rhs)) `,` "
            "custom<CudaTileType>(type($acc)) `,` custom<CudaTileType>(type($lhs_scale)) `,` "
            "custom<CudaTileType>(type($rhs_scale))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_type", ("acc", "result")),
            ("same_element_type", ("lhs", "rhs")),
            ("same_element_type", ("lhs_scale", "rhs_scale")),
            ("same_rank", ("lhs", "rhs", "acc", "lhs_scale", "rhs_scale")),
        ),
        description=(
            "Like `mmaf`, but every element of `lhs_scale` and `rhs_scale` multiplies a block of "
            "consecutive `lhs`/`rhs` elements along K before the product is taken. Inputs are "
            "f8E4M3FN, f8E5M2 or f4E2M1FN with f8E8M0FNU scales (f4E2M1FN inputs may also use "
            "non-negative f8E4M3FN scales), and the accumulator and result are f32. Added in 13.3."
        ),
        examples=(
            (
                "%r = mmaf_scaled %a, %b, %c, %sa, %sb : tile<128x64xf8E4M3FN>, "
                "tile<64x128xf8E4M3FN>, tile<128x128xf32>, tile<128x2xf8E8M0FNU>, "
                "tile<2x128xf8E8M0FNU>"
            ),
        ),
    ),
    OpDef(
        "mulf",
        0x4C,
        "13.1",
        summary="Multiply two float tiles element by element",
        group="floating-point",
        operands=(
            OperandDef("lhs", "base_float_tile", doc="left operand"),
            OperandDef("rhs", "base_float_tile", doc="right operand"),
        ),
        attributes=(
            AttrDef(
                "rounding_mode",
                "enum:rounding",
                doc="rounding applied to each result element",
            ),
            AttrDef(
                "flush_to_zero",
                "unit",
                optional=True,
                doc="flush subnormal inputs and results to signed zero (f32 only)",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the operands"),),
        assembly=(
            "$lhs `,` $rhs custom<IEEERoundingMode>($rounding_mode) (`flush_to_zero` "
            "$flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Multiplies `lhs` and `rhs` element by element on one shared f16, bf16, f32 or f64 "
            "tile type. `rounding<...>` picks an IEEE rounding direction and `flush_to_zero` "
            "applies to f32."
        ),
        examples=("%r = mulf %a, %b : tile<4xf32>",),
    ),
    OpDef(
        "negf",
        0x4F,
        "13.1",
        summary="Flip the sign of each float element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=("Flips the sign of every element of `source`; the result has the same tile type."),
        examples=("%r = negf %x : tile<4xf32>",),
    ),
    OpDef(
        "pow",
        0x54,
        "13.1",
        summary="Raise each element to a per-element power",
        group="floating-point",
        operands=(
            OperandDef("source", "base_float_tile", doc="base tile"),
            OperandDef("exponent", "base_float_tile", doc="exponent tile"),
        ),
        results=(ResultDef("result", "base_float_tile", doc="source ** exponent"),),
        assembly="$source `,` $exponent attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_type", ("result", "source", "exponent")),
            ("same_rank", ("source", "exponent", "result")),
        ),
        description=(
            "Raises each element of `source` to the matching element of `exponent`. Both operands "
            "and the result have the same float tile type."
        ),
        examples=("%r = pow %x, %e : tile<4xf32>",),
    ),
    OpDef(
        "fpowi",
        0x79,
        "13.4",
        summary="Raise each element to a per-element integer power",
        group="floating-point",
        operands=(
            OperandDef("source", "base_float_tile", since="13.4", doc="base tile"),
            OperandDef("exponent", "fpowi_exponent_tile", since="13.4", doc="signed integer exponents, same shape"),
        ),
        results=(ResultDef("result", "base_float_tile", since="13.4", doc="source ** exponent"),),
        assembly=(
            "$source `,` $exponent attr-dict `:` custom<CudaTileType>(type($source)) `,` "
            "custom<CudaTileType>(type($exponent))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_type", ("source", "result")),
            ("same_shape", ("source", "exponent")),
        ),
        description=(
            "Raises each element of `source` to the matching signed integer of `exponent` (i1, "
            "i8, i16 or i32, sign-extended: an i1 true is -1) by "
            "repeated squaring, as NVIDIA's tileiras does: over the bits of |n| from the lowest, "
            "a running product takes each square whose bit is set, each step rounded to nearest "
            "(f16 and bf16 compute in f32 and round once at the end); a negative exponent then "
            "takes the correctly rounded reciprocal. Not correctly rounded in general. Bytecode "
            "13.4+ (cuTile Python's `x ** n` for an integer `n`)."
        ),
        examples=("%r = fpowi %x, %n : tile<4xf32>, tile<4xi32>",),
    ),
    OpDef(
        "remf",
        0x59,
        "13.1",
        summary="Remainder of truncated float division, per element",
        group="floating-point",
        operands=(
            OperandDef("lhs", "base_float_tile", doc="dividend"),
            OperandDef("rhs", "base_float_tile", doc="divisor"),
        ),
        results=(ResultDef("result", "base_float_tile", doc="remainder, same type as the operands"),),
        assembly="$lhs `,` $rhs attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Computes `lhs - trunc(lhs / rhs) * rhs` per element, so the result carries the sign "
            "of `lhs` and is smaller in magnitude than `rhs`. A zero divisor, an infinite dividend "
            "or a NaN input gives NaN; an infinite divisor returns `lhs` unchanged."
        ),
        examples=("%r = remf %a, %b : tile<4xf32>",),
    ),
    OpDef(
        "rsqrt",
        0x5D,
        "13.1",
        summary="Reciprocal of the square root of each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        attributes=(
            AttrDef(
                "flush_to_zero",
                "unit",
                optional=True,
                doc="flush subnormal inputs and results to signed zero (f32 only)",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly=("$source (`flush_to_zero` $flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=(
            "Computes 1 / sqrt(x) for every element of `source`. `flush_to_zero` flushes subnormal "
            "inputs and results (f32 only)."
        ),
        examples=("%r = rsqrt %x flush_to_zero : tile<4xf32>",),
    ),
    OpDef(
        "sin",
        0x62,
        "13.1",
        summary="Sine of each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=("Computes the sine of every element of `source` (in radians); f16 and bf16 are evaluated in f32."),
        examples=("%r = sin %x : tile<4xf32>",),
    ),
    OpDef(
        "sinh",
        0x63,
        "13.1",
        summary="Hyperbolic sine of each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=("Computes sinh(x) for every element of `source`; half-precision inputs are evaluated in f32."),
        examples=("%r = sinh %x : tile<4xf32>",),
    ),
    OpDef(
        "sqrt",
        0x64,
        "13.1",
        summary="Square root of each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        attributes=(
            AttrDef(
                "rounding_mode",
                "enum:rounding",
                doc="rounding applied to each result element",
            ),
            AttrDef(
                "flush_to_zero",
                "unit",
                optional=True,
                doc="flush subnormal inputs and results to signed zero (f32 only)",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly=(
            "$source custom<SqrtOpRoundingMode>($rounding_mode) (`flush_to_zero` $flush_to_zero^)? "
            "attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=(
            "Computes the square root of every element of `source`. `rounding<...>` selects an "
            "IEEE direction or, for f32, the fast `approx` mode; `flush_to_zero` applies to f32."
        ),
        examples=("%r = sqrt %x : tile<4xf32>",),
    ),
    OpDef(
        "subf",
        0x67,
        "13.1",
        summary="Subtract two float tiles element by element",
        group="floating-point",
        operands=(
            OperandDef("lhs", "base_float_tile", doc="left operand"),
            OperandDef("rhs", "base_float_tile", doc="right operand"),
        ),
        attributes=(
            AttrDef(
                "rounding_mode",
                "enum:rounding",
                doc="rounding applied to each result element",
            ),
            AttrDef(
                "flush_to_zero",
                "unit",
                optional=True,
                doc="flush subnormal inputs and results to signed zero (f32 only)",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the operands"),),
        assembly=(
            "$lhs `,` $rhs custom<IEEERoundingMode>($rounding_mode) (`flush_to_zero` "
            "$flush_to_zero^)? attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Subtracts `rhs` from `lhs` element by element on one shared f16, bf16, f32 or f64 "
            "tile type. `rounding<...>` picks an IEEE rounding direction and `flush_to_zero` "
            "applies to f32."
        ),
        examples=("%r = subf %a, %b : tile<4xf32>",),
    ),
    OpDef(
        "tan",
        0x69,
        "13.1",
        summary="Tangent of each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=(
            "Computes the tangent of every element of `source` (in radians); f16 and bf16 are evaluated in f32."
        ),
        examples=("%r = tan %x : tile<4xf32>",),
    ),
    OpDef(
        "tanh",
        0x6A,
        "13.1",
        summary="Hyperbolic tangent of each element",
        group="floating-point",
        operands=(OperandDef("source", "base_float_tile", doc="input float tile"),),
        attributes=(
            AttrDef(
                "rounding_mode",
                "enum:rounding",
                default="full",
                since="13.2",
                doc="`full` (default) or `approx`",
            ),
        ),
        results=(ResultDef("result", "base_float_tile", doc="result, same type as the input"),),
        assembly=(
            "$source custom<TanHOpRoundingMode>($rounding_mode) attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=(
            "Computes tanh(x) for every element of `source`. The rounding mode defaults to `full` "
            "(within 2 ulp for f32, 1 ulp for f64); `rounding<approx>` selects a faster f32 "
            "approximation that keeps subnormal results. The `rounding_mode` attribute exists "
            "since 13.2."
        ),
        examples=("%r = tanh %x rounding<approx> : tile<4xf32>",),
    ),
)

# ================================================================================================
# Integer: element-wise arithmetic and matrix multiply
# ================================================================================================

_INTEGER: tuple[OpDef, ...] = (
    OpDef(
        "absi",
        0x01,
        "13.1",
        summary="Magnitude of each signed integer element",
        group="integer",
        operands=(OperandDef("source", "int_tile", doc="input tile, read as signed"),),
        results=(ResultDef("result", "int_tile", doc="magnitudes, read as unsigned"),),
        assembly="$source attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_operands_and_result_shape", ()),
            ("same_type", ("source", "result")),
        ),
        description=(
            "Reads each element of `source` as a signed integer and returns its magnitude, which "
            "is to be read as unsigned (so even the most negative value has an exact result)."
        ),
        examples=("%r = absi %x : tile<4xi32>",),
    ),
    OpDef(
        "addi",
        0x03,
        "13.1",
        summary="Add two integer tiles element by element (wrapping)",
        group="integer",
        operands=(
            OperandDef("lhs", "int_tile", doc="left operand"),
            OperandDef("rhs", "int_tile", doc="right operand"),
        ),
        attributes=(
            AttrDef(
                "overflow",
                "enum:overflow",
                default="none",
                doc="kind of overflow the compiler may assume never happens",
            ),
        ),
        results=(ResultDef("result", "int_tile", doc="result, same type as the operands"),),
        assembly=("$lhs `,` $rhs (`overflow` `` $overflow^)? attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Adds two integer tiles of the same type, wrapping around on overflow. The `overflow` "
            "flag (no_signed_wrap, no_unsigned_wrap, no_wrap) promises that such overflow never "
            "happens; the default `none` promises nothing."
        ),
        examples=("%r = addi %a, %b overflow<no_signed_wrap> : tile<4xi32>",),
    ),
    OpDef(
        "cmpi",
        0x0F,
        "13.1",
        summary="Element-wise integer comparison yielding an i1 tile",
        group="integer",
        operands=(
            OperandDef("lhs", "int_tile", doc="left operand"),
            OperandDef("rhs", "int_tile", doc="right operand"),
        ),
        attributes=(
            AttrDef("comparison_predicate", "enum:comparison_predicate", doc="relation to test"),
            AttrDef("signedness", "enum:signedness", doc="compare as signed or unsigned integers"),
        ),
        results=(ResultDef("result", "i1_tile", doc="1 where the relation holds, else 0"),),
        assembly=(
            "custom<ComparisonPredicate>($comparison_predicate) $lhs `,` $rhs `,` "
            "custom<Signedness>($signedness) attr-dict `:` custom<CudaTileType>(type($lhs)) `->` "
            "custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_type", ("lhs", "rhs")),
            ("i1_same_shape", ("lhs", "result")),
        ),
        description=(
            "Tests `comparison_predicate` between matching elements of `lhs` and `rhs`, which "
            "share one integer tile type, and returns an i1 tile of the same shape. `signedness` "
            "selects signed or unsigned ordering (it does not matter for equal and not_equal)."
        ),
        examples=("%m = cmpi less_than %a, %b, signed : tile<4xi32> -> tile<4xi1>",),
    ),
    OpDef(
        "divi",
        0x15,
        "13.1",
        summary="Divide two integer tiles element by element",
        group="integer",
        operands=(
            OperandDef("lhs", "int_tile", doc="dividend"),
            OperandDef("rhs", "int_tile", doc="divisor"),
        ),
        attributes=(
            AttrDef("signedness", "enum:signedness", doc="divide as signed or unsigned"),
            AttrDef(
                "rounding",
                "enum:rounding",
                default="zero",
                doc="`zero` (default), `positive_inf` or `negative_inf`",
            ),
        ),
        results=(ResultDef("result", "int_tile", doc="quotient, same type as the operands"),),
        assembly=(
            "$lhs `,` $rhs custom<Signedness>($signedness) (`rounding` `` $rounding^)? attr-dict "
            "`:` custom<CudaTileType>(type($result))"
        ),
        traits=frozenset({"NoMemoryEffect"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Divides `lhs` by `rhs` as signed or unsigned integers, rounding toward zero by "
            "default; `rounding<positive_inf>` gives ceiling division and `rounding<negative_inf>` "
            "floor division (not with unsigned). Division by zero and signed MIN / -1 are "
            "undefined."
        ),
        examples=("%r = divi %a, %b signed rounding<negative_inf> : tile<4xi32>",),
    ),
    OpDef(
        "maxi",
        0x46,
        "13.1",
        summary="Larger of two integer tiles, per element",
        group="integer",
        operands=(
            OperandDef("lhs", "int_tile", doc="left operand"),
            OperandDef("rhs", "int_tile", doc="right operand"),
        ),
        attributes=(AttrDef("signedness", "enum:signedness", doc="read the integers as signed or unsigned"),),
        results=(ResultDef("result", "int_tile", doc="result, same type as the operands"),),
        assembly=("$lhs `,` $rhs custom<Signedness>($signedness) attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=("Returns the larger of each pair of elements, compared as signed or unsigned integers."),
        examples=("%r = maxi %a, %b signed : tile<4xi32>",),
    ),
    OpDef(
        "mini",
        0x48,
        "13.1",
        summary="Smaller of two integer tiles, per element",
        group="integer",
        operands=(
            OperandDef("lhs", "int_tile", doc="left operand"),
            OperandDef("rhs", "int_tile", doc="right operand"),
        ),
        attributes=(AttrDef("signedness", "enum:signedness", doc="read the integers as signed or unsigned"),),
        results=(ResultDef("result", "int_tile", doc="result, same type as the operands"),),
        assembly=("$lhs `,` $rhs custom<Signedness>($signedness) attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=("Returns the smaller of each pair of elements, compared as signed or unsigned integers."),
        examples=("%r = mini %a, %b unsigned : tile<4xi32>",),
    ),
    OpDef(
        "mmai",
        0x4A,
        "13.1",
        summary="Integer (i8) matrix multiply-accumulate",
        group="integer",
        operands=(
            OperandDef("lhs", "mmai_operand_tile", doc="left i8 matrix"),
            OperandDef("rhs", "mmai_operand_tile", doc="right i8 matrix"),
            OperandDef("acc", "mmai_acc_tile", doc="i32 accumulator"),
        ),
        attributes=(
            AttrDef("signedness_lhs", "enum:signedness", doc="read lhs as signed or unsigned"),
            AttrDef("signedness_rhs", "enum:signedness", doc="read rhs as signed or unsigned"),
        ),
        results=(ResultDef("result", "mmai_result_tile", doc="lhs x rhs + acc, same type as acc"),),
        assembly=(
            "$lhs `,` $rhs `,` $acc custom<Signedness>($signedness_lhs) "
            "custom<Signedness>($signedness_rhs) attr-dict `:` custom<CudaTileType>(type($lhs)) "
            "`,` custom<CudaTileType>(type($rhs)) `,` custom<CudaTileType>(type($acc))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_type", ("acc", "result")),
            ("same_element_type", ("lhs", "rhs")),
            ("same_rank", ("lhs", "rhs", "acc")),
        ),
        description=(
            "Computes `lhs x rhs + acc` where `lhs` and `rhs` are i8 tiles, each read as signed or "
            "unsigned according to `signedness_lhs` / `signedness_rhs`, and the accumulator and "
            "result are signed i32. Shapes follow `mmaf`: MxK, KxN, MxN, or a batched 3-D form."
        ),
        examples=(("%r = mmai %a, %b, %c signed signed : tile<4x8xi8>, tile<8x2xi8>, tile<4x2xi32>"),),
    ),
    OpDef(
        "mulhii",
        0x4D,
        "13.1",
        summary="High half of each unsigned integer product",
        group="integer",
        operands=(
            OperandDef("x", "int_tile", doc="first factor"),
            OperandDef("y", "int_tile", doc="second factor"),
        ),
        results=(ResultDef("result", "int_tile", doc="high half of x * y"),),
        assembly="$x `,` $y attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("x", "y", "result")),),
        description=(
            "For each element pair, returns the upper half of the double-width unsigned product, "
            "i.e. the bits that `muli` throws away (bits 32..63 of the 64-bit product for i32)."
        ),
        examples=("%r = mulhii %a, %b : tile<4xi32>",),
    ),
    OpDef(
        "muli",
        0x4E,
        "13.1",
        summary="Multiply two integer tiles element by element (low half)",
        group="integer",
        operands=(
            OperandDef("lhs", "int_tile", doc="left operand"),
            OperandDef("rhs", "int_tile", doc="right operand"),
        ),
        attributes=(
            AttrDef(
                "overflow",
                "enum:overflow",
                default="none",
                doc="kind of overflow the compiler may assume never happens",
            ),
        ),
        results=(ResultDef("result", "int_tile", doc="result, same type as the operands"),),
        assembly=("$lhs `,` $rhs (`overflow` `` $overflow^)? attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Multiplies two integer tiles element by element and keeps the low bits of each "
            "product (wrap-around). `overflow` may promise that no signed and/or unsigned overflow "
            "occurs."
        ),
        examples=("%r = muli %a, %b : tile<4xi32>",),
    ),
    OpDef(
        "negi",
        0x50,
        "13.1",
        summary="Negate each integer element",
        group="integer",
        operands=(OperandDef("source", "int_tile", doc="input integer tile"),),
        attributes=(
            AttrDef(
                "overflow",
                "enum:overflow",
                default="none",
                since="13.2",
                doc="kind of overflow the compiler may assume never happens",
            ),
        ),
        results=(ResultDef("result", "int_tile", doc="negated tile, same type"),),
        assembly=("$source (`overflow` `` $overflow^)? attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("source", "result")),),
        description=(
            "Computes the two's-complement negation of every element (read as signed). The "
            "`overflow` attribute, added in 13.2, may promise that negation does not overflow."
        ),
        examples=("%r = negi %x : tile<4xi16>",),
    ),
    OpDef(
        "remi",
        0x5A,
        "13.1",
        summary="Remainder of truncated integer division, per element",
        group="integer",
        operands=(
            OperandDef("lhs", "int_tile", doc="dividend"),
            OperandDef("rhs", "int_tile", doc="divisor"),
        ),
        attributes=(AttrDef("signedness", "enum:signedness", doc="read the integers as signed or unsigned"),),
        results=(ResultDef("result", "int_tile", doc="remainder, same type as the operands"),),
        assembly=("$lhs `,` $rhs custom<Signedness>($signedness) attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(
            ("same_type", ("result", "lhs", "rhs")),
            ("same_shape", ("result", "lhs", "rhs")),
        ),
        description=(
            "Computes `lhs - trunc(lhs / rhs) * rhs` per element as signed or unsigned integers; a "
            "signed remainder takes the sign of `lhs`. Division by zero is undefined."
        ),
        examples=("%r = remi %a, %b signed : tile<4xi32>",),
    ),
    OpDef(
        "shli",
        0x60,
        "13.1",
        summary="Shift each integer element left",
        group="integer",
        operands=(
            OperandDef("lhs", "int_tile", doc="value to shift"),
            OperandDef("rhs", "int_tile", doc="shift amount, read as unsigned"),
        ),
        attributes=(
            AttrDef(
                "overflow",
                "enum:overflow",
                default="none",
                doc="kind of overflow the compiler may assume never happens",
            ),
        ),
        results=(ResultDef("result", "int_tile", doc="shifted tile"),),
        assembly=("$lhs `,` $rhs (`overflow` `` $overflow^)? attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Shifts each element of `lhs` left by the matching element of `rhs` (read as "
            "unsigned), filling with zeros. `overflow` may promise that no significant bits are "
            "shifted out."
        ),
        examples=("%r = shli %a, %n : tile<4xi32>",),
    ),
    OpDef(
        "shri",
        0x61,
        "13.1",
        summary="Shift each integer element right",
        group="integer",
        operands=(
            OperandDef("lhs", "int_tile", doc="value to shift"),
            OperandDef("rhs", "int_tile", doc="shift amount, read as unsigned"),
        ),
        attributes=(
            AttrDef(
                "signedness",
                "enum:signedness",
                doc="`signed` for arithmetic, `unsigned` for logical shift",
            ),
        ),
        results=(ResultDef("result", "int_tile", doc="shifted tile"),),
        assembly=("$lhs `,` $rhs custom<Signedness>($signedness) attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Shifts each element of `lhs` right by the matching element of `rhs` (read as "
            "unsigned). With `unsigned` the vacated bits are zero (logical shift); with `signed` "
            "they copy the sign bit (arithmetic shift)."
        ),
        examples=("%r = shri %a, %n signed : tile<4xi32>",),
    ),
    OpDef(
        "subi",
        0x68,
        "13.1",
        summary="Subtract two integer tiles element by element (wrapping)",
        group="integer",
        operands=(
            OperandDef("lhs", "int_tile", doc="left operand"),
            OperandDef("rhs", "int_tile", doc="right operand"),
        ),
        attributes=(
            AttrDef(
                "overflow",
                "enum:overflow",
                default="none",
                doc="kind of overflow the compiler may assume never happens",
            ),
        ),
        results=(ResultDef("result", "int_tile", doc="result, same type as the operands"),),
        assembly=("$lhs `,` $rhs (`overflow` `` $overflow^)? attr-dict `:` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=(
            "Subtracts `rhs` from `lhs` element by element with wrap-around; `overflow` may "
            "promise that no signed and/or unsigned overflow happens."
        ),
        examples=("%r = subi %a, %b : tile<4xi32>",),
    ),
)

# ================================================================================================
# Bitwise
# ================================================================================================

_BITWISE: tuple[OpDef, ...] = (
    OpDef(
        "andi",
        0x04,
        "13.1",
        summary="Bitwise AND of two integer tiles",
        group="bitwise",
        operands=(
            OperandDef("lhs", "int_tile", doc="left operand"),
            OperandDef("rhs", "int_tile", doc="right operand"),
        ),
        results=(ResultDef("result", "int_tile", doc="result, same type as the operands"),),
        assembly="$lhs `,` $rhs attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=("Computes the bitwise AND of matching elements of two integer tiles of the same type."),
        examples=("%r = andi %a, %b : tile<4xi32>",),
    ),
    OpDef(
        "ori",
        0x52,
        "13.1",
        summary="Bitwise OR of two integer tiles",
        group="bitwise",
        operands=(
            OperandDef("lhs", "int_tile", doc="left operand"),
            OperandDef("rhs", "int_tile", doc="right operand"),
        ),
        results=(ResultDef("result", "int_tile", doc="result, same type as the operands"),),
        assembly="$lhs `,` $rhs attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=("Computes the bitwise OR of matching elements of two integer tiles of the same type."),
        examples=("%r = ori %a, %b : tile<4xi32>",),
    ),
    OpDef(
        "xori",
        0x6C,
        "13.1",
        summary="Bitwise exclusive OR of two integer tiles",
        group="bitwise",
        operands=(
            OperandDef("lhs", "int_tile", doc="left operand"),
            OperandDef("rhs", "int_tile", doc="right operand"),
        ),
        results=(ResultDef("result", "int_tile", doc="result, same type as the operands"),),
        assembly="$lhs `,` $rhs attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        type_rules=(("same_type", ("lhs", "rhs", "result")),),
        description=("Computes the bitwise exclusive OR of matching elements of two integer tiles of the same type."),
        examples=("%r = xori %a, %b : tile<4xi32>",),
    ),
)

# ================================================================================================
# Conversions between element types
# ================================================================================================

_CONVERSION: tuple[OpDef, ...] = (
    OpDef(
        "bitcast",
        0x09,
        "13.1",
        summary="Reinterpret the bits of each element as another type",
        group="conversion",
        operands=(OperandDef("source", "number_tile", doc="tile to reinterpret"),),
        results=(ResultDef("result", "number_tile", doc="same bits, new element type"),),
        assembly=("$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_shape", ("source", "result")),),
        description=(
            "Changes the element type of a tile without changing any bits; the two element types "
            "must have the same width and neither may be a pointer (use ptr_to_int / int_to_ptr "
            "instead)."
        ),
        examples=("%r = bitcast %x : tile<4xi32> -> tile<4xf32>",),
    ),
    OpDef(
        "exti",
        0x25,
        "13.1",
        summary="Widen integer elements",
        group="conversion",
        operands=(OperandDef("from", "int_or_i4_tile", doc="narrow integer tile"),),
        attributes=(AttrDef("signedness", "enum:signedness", doc="sign- or zero-extend"),),
        results=(ResultDef("to", "int_or_i4_tile", doc="widened tile"),),
        assembly=(
            "$from custom<Signedness>($signedness) attr-dict `:` custom<CudaTileType>(type($from)) "
            "`->` custom<CudaTileType>(type($to))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_shape", ("from", "to")),),
        description=(
            "Converts each element to a strictly wider integer type of the same shape, "
            "zero-extending for `unsigned` and sign-extending for `signed`. i4 sources are "
            "accepted since 13.3."
        ),
        examples=("%r = exti %x signed : tile<4xi16> -> tile<4xi32>",),
    ),
    OpDef(
        "ftof",
        0x2A,
        "13.1",
        summary="Convert between floating-point element types",
        group="conversion",
        operands=(OperandDef("from", "float_tile", doc="float tile to convert"),),
        attributes=(
            AttrDef(
                "rounding_mode",
                "enum:rounding",
                default="nearest_even",
                doc="rounding of the conversion (default nearest_even)",
            ),
        ),
        results=(ResultDef("to", "float_tile", doc="converted float tile"),),
        assembly=(
            "$from custom<IEEERoundingMode>($rounding_mode) attr-dict `:` "
            "custom<CudaTileType>(type($from)) `->` custom<CudaTileType>(type($to))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_shape", ("from", "to")),),
        description=(
            "Converts each element to another float type of the same shape (the types must "
            "differ), rounding in `rounding_mode`. As NVIDIA's tileiras 13.5 accepts them: "
            "conversions to f8E8M0FNU take zero or positive_inf; to the other 8- and 4-bit types "
            "nearest_even only; to the rest nearest_even or zero, and negative_inf or positive_inf "
            "where the conversion is exact, to f64, and from f64 to f32 (NVIDIA's 13.3 verifier "
            "took nearest_even only)."
        ),
        examples=("%r = ftof %x : tile<4xf32> -> tile<4xf16>",),
    ),
    OpDef(
        "ftoi",
        0x2B,
        "13.1",
        summary="Convert floats to integers, rounding toward zero",
        group="conversion",
        operands=(OperandDef("from", "float_tile", doc="float tile to convert"),),
        attributes=(
            AttrDef("signedness", "enum:signedness", doc="produce signed or unsigned integers"),
            AttrDef("rounding_mode", "enum:rounding", doc="must be nearest_int_to_zero"),
            AttrDef(
                "saturating",
                "unit",
                optional=True,
                since="13.4",
                doc="clamp out-of-range values to the integer range and NaN to 0 (13.4+)",
            ),
        ),
        results=(ResultDef("to", "int_tile", doc="integer tile"),),
        assembly=(
            "$from custom<Signedness>($signedness) custom<IntegerRoundingMode>($rounding_mode) "
            "(`saturating` $saturating^)? attr-dict `:` custom<CudaTileType>(type($from)) `->` "
            "custom<CudaTileType>(type($to))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_shape", ("from", "to")),),
        description=(
            "Converts each float element to a signed or unsigned integer, dropping the fraction "
            "(nearest_int_to_zero is the only rounding mode). NaN, infinities and values out of "
            "the target range give undefined results, unless `saturating` (13.4+) is set: then "
            "they clamp to the integer range and NaN gives 0."
        ),
        examples=("%r = ftoi %x signed : tile<4xf32> -> tile<4xi32>",),
    ),
    OpDef(
        "int_to_ptr",
        0x33,
        "13.1",
        summary="Turn 64-bit integers into pointers",
        group="conversion",
        operands=(OperandDef("source", "i64_tile", doc="i64 addresses"),),
        results=(ResultDef("result", "pointer_tile", doc="pointer tile"),),
        assembly=("$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_shape", ("source", "result")),),
        description=(
            "Reinterprets a tile of i64 addresses (read as unsigned) as a tile of pointers of the "
            "same shape; the inverse of `ptr_to_int`."
        ),
        examples=("%p = int_to_ptr %a : tile<4xi64> -> tile<4xptr<f32>>",),
    ),
    OpDef(
        "itof",
        0x3B,
        "13.1",
        summary="Convert integers to floating point",
        group="conversion",
        operands=(OperandDef("from", "int_tile", doc="integer tile to convert"),),
        attributes=(
            AttrDef("signedness", "enum:signedness", doc="read the input as signed or unsigned"),
            AttrDef("rounding_mode", "enum:rounding", doc="rounding of the conversion"),
        ),
        results=(ResultDef("to", "float_tile", doc="float tile"),),
        assembly=(
            "$from custom<Signedness>($signedness) custom<IEEERoundingMode>($rounding_mode) "
            "attr-dict `:` custom<CudaTileType>(type($from)) `->` custom<CudaTileType>(type($to))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_shape", ("from", "to")),),
        description=(
            "Converts each integer element (read per `signedness`) to the nearest value of the "
            "float result type. Values too large for the format become infinity, or NaN if it has "
            "none."
        ),
        examples=("%r = itof %x signed : tile<4xi32> -> tile<4xf32>",),
    ),
    OpDef(
        "ptr_to_int",
        0x56,
        "13.1",
        summary="Turn pointers into 64-bit integers",
        group="conversion",
        operands=(OperandDef("source", "pointer_tile", doc="pointer tile"),),
        results=(ResultDef("result", "i64_tile", doc="i64 addresses"),),
        assembly=("$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_shape", ("source", "result")),),
        description=(
            "Returns the address held by each pointer as an i64 element (to be read as unsigned); "
            "the inverse of `int_to_ptr`."
        ),
        examples=("%a = ptr_to_int %p : tile<4xptr<f32>> -> tile<4xi64>",),
    ),
    OpDef(
        "ptr_to_ptr",
        0x57,
        "13.1",
        summary="Change the pointee type of a tile of pointers",
        group="conversion",
        operands=(OperandDef("source", "pointer_tile", doc="pointer tile"),),
        results=(ResultDef("result", "pointer_tile", doc="pointers with the new pointee type"),),
        assembly=("$source attr-dict `:` custom<CudaTileType>(type($source)) `->` custom<CudaTileType>(type($result))"),
        traits=frozenset({"Pure"}),
        type_rules=(("same_shape", ("source", "result")),),
        description=(
            "Reinterprets pointers to one element type as pointers to another, keeping the "
            "addresses. Casts between pointers and non-pointers go through ptr_to_int / int_to_ptr "
            "instead."
        ),
        examples=("%q = ptr_to_ptr %p : tile<4xptr<f32>> -> tile<4xptr<i32>>",),
    ),
    OpDef(
        "trunci",
        0x6B,
        "13.1",
        summary="Narrow integer elements",
        group="conversion",
        operands=(OperandDef("from", "int_or_i4_tile", doc="wide integer tile"),),
        attributes=(
            AttrDef(
                "overflow",
                "enum:overflow",
                default="none",
                doc="kind of overflow the compiler may assume never happens",
            ),
        ),
        results=(ResultDef("to", "int_or_i4_tile", doc="truncated tile"),),
        assembly=(
            "$from (`overflow` `` $overflow^)? attr-dict `:` custom<CudaTileType>(type($from)) "
            "`->` custom<CudaTileType>(type($to))"
        ),
        traits=frozenset({"Pure"}),
        type_rules=(("same_shape", ("from", "to")),),
        description=(
            "Keeps the low bits of each element in a strictly narrower integer type of the same "
            "shape. `overflow` may promise that the dropped bits all equal the new sign bit "
            "(no_signed_wrap) or are all zero (no_unsigned_wrap)."
        ),
        examples=("%r = trunci %x : tile<4xi32> -> tile<4xi8>",),
    ),
)

# ================================================================================================
# Memory: pointer loads and stores, tokens, allocation
# ================================================================================================

_MEMORY: tuple[OpDef, ...] = (
    OpDef(
        "alloca",
        0x71,
        "13.3",
        summary="Allocate memory that lives until the end of the block",
        group="memory",
        attributes=(
            AttrDef("num_elem", "i64", since="13.3", doc="number of elements to reserve"),
            AttrDef("alignment", "i64", since="13.3", doc="byte alignment, a power of two"),
            AttrDef(
                "global",
                "unit",
                optional=True,
                since="13.3",
                doc="the address may be shared with other tile threads",
            ),
        ),
        results=(
            ResultDef(
                "result",
                "scalar_pointer_tile",
                since="13.3",
                doc="pointer to the allocation",
            ),
        ),
        assembly=(
            "`num_elem` `=` $num_elem `,` `alignment` `=` $alignment (`global` $global^)? "
            "attr-dict `:` custom<CudaTileType>(type($result))"
        ),
        description=(
            "Reserves room for `num_elem` elements of the result's pointee type, aligned to "
            "`alignment` bytes (a power of two), and returns a pointer to it; it traps if memory "
            "runs out. Only the allocating tile thread may use the address unless `global` is set. "
            "Added in 13.3."
        ),
        examples=("%p = alloca num_elem = 64, alignment = 128 : tile<ptr<f32>>",),
    ),
    OpDef(
        "gdc_launch_dependents_tko",
        0x77,
        "13.4",
        summary="Let the dependent grid start (programmatic dependent launch)",
        group="memory",
        operands=(OperandDef("token", "token", "optional", since="13.4", doc="optional input token"),),
        results=(ResultDef("result_token", "token", since="13.4", doc="token ordered after the signal"),),
        assembly="(`token` `=` $token^)? attr-dict `->` custom<CudaTileType>(type($result_token))",
        description=(
            "Signals that a kernel launched after this one with programmatic dependent launch may "
            "start (PTX `griddepcontrol.launch_dependents`, sm_90+; nothing on older targets). It "
            "changes no values: only when the dependent grid is scheduled. Bytecode 13.4+ (cuTile "
            "Python's `ct.grid_dependency_control_launch_dependents`)."
        ),
        examples=("%t1 = gdc_launch_dependents_tko token = %t0 -> token",),
    ),
    OpDef(
        "gdc_wait_tko",
        0x78,
        "13.4",
        summary="Wait for the grid this one depends on (programmatic dependent launch)",
        group="memory",
        operands=(OperandDef("token", "token", "optional", since="13.4", doc="optional input token"),),
        results=(ResultDef("result_token", "token", since="13.4", doc="token ordered after the wait"),),
        assembly="(`token` `=` $token^)? attr-dict `->` custom<CudaTileType>(type($result_token))",
        description=(
            "Waits until the grid this kernel programmatically depends on has finished and its "
            "memory is visible (PTX `griddepcontrol.wait`, sm_90+; nothing on older targets). "
            "Without such a launch it returns at once. Bytecode 13.4+ (cuTile Python's "
            "`ct.grid_dependency_control_wait`)."
        ),
        examples=("%t1 = gdc_wait_tko token = %t0 -> token",),
    ),
    OpDef(
        "join_tokens",
        0x3C,
        "13.1",
        summary="Merge tokens into one",
        group="memory",
        operands=(OperandDef("tokens", "token", "variadic", doc="tokens to wait for"),),
        results=(ResultDef("result", "token", doc="combined token"),),
        assembly="$tokens attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        description=(
            "Produces a token that depends on every input token, so ops consuming it are ordered after all of them."
        ),
        examples=("%t = join_tokens %t0, %t1 : token",),
    ),
    OpDef(
        "load_ptr_tko",
        0x3D,
        "13.1",
        summary="Gather load through a tile of pointers",
        group="memory",
        operands=(
            OperandDef("source", "pointer_tile", doc="addresses to read"),
            OperandDef(
                "mask",
                "i1_tile",
                "optional",
                doc="optional i1 tile; lanes that are false are left out",
            ),
            OperandDef(
                "paddingValue",
                "number_tile",
                "optional",
                doc="values for masked-off lanes",
            ),
            OperandDef(
                "token",
                "token",
                "optional",
                doc="optional input token the op is ordered after",
            ),
        ),
        attributes=(
            AttrDef(
                "memory_ordering_semantics",
                "enum:memory_ordering_semantics",
                doc="weak, relaxed or acquire",
            ),
            AttrDef(
                "memory_scope",
                "enum:memory_scope",
                optional=True,
                doc="threads the access must be coherent with",
            ),
            AttrDef(
                "optimization_hints",
                "optimization_hints",
                optional=True,
                doc="per-architecture tuning hints",
            ),
        ),
        results=(
            ResultDef("result", "tile", doc="loaded values"),
            ResultDef(
                "result_token",
                "token",
                doc="token that later token-ordered ops can depend on",
            ),
        ),
        assembly=(
            "$memory_ordering_semantics ($memory_scope^)? $source (`,` $mask^)? (`,` "
            "$paddingValue^)? (`token` `` `=` `` $token^)? (`optimization_hints` `=` "
            "$optimization_hints^)? attr-dict `:` custom<CudaTileType>(type($source)) (`,` "
            "custom<CudaTileType>(type($mask))^)? (`,` "
            "custom<CudaTileType>(type($paddingValue))^)? `->` custom<CudaTileType>(type($result)) "
            "`,` custom<CudaTileType>(type($result_token))"
        ),
        traits=frozenset({"AttrSizedOperandSegments"}),
        type_rules=(
            ("pointer_tile_of", ("source", "result")),
            ("same_shape", ("source", "mask"), "shape of 'mask' must match the shape of 'source'"),
            ("same_shape", ("result", "paddingValue"), "type of 'paddingValue' must match the type of 'result'"),
            ("same_element_type", ("result", "paddingValue"), "type of 'paddingValue' must match the type of 'result'"),
        ),
        description=(
            "Loads one element per pointer of `source` and returns the data plus a token. Lanes "
            "switched off by `mask` take the matching `paddingValue` element (undefined without "
            "one); i1 values occupy a byte each. Ordering (weak, relaxed or acquire), scope and an "
            "input token decide how it is ordered against other memory operations."
        ),
        examples=(
            (
                "%v, %t = load_ptr_tko weak %ptrs, %mask, %pad : tile<8xptr<f32>>, tile<8xi1>, "
                "tile<8xf32> -> tile<8xf32>, token"
            ),
        ),
    ),
    OpDef(
        "memory_fence_alias_tko",
        0x7A,
        "13.4",
        summary="Order accesses to memory reached through different addresses",
        group="memory",
        operands=(OperandDef("token", "token", since="13.4", doc="token the fence is ordered after"),),
        results=(ResultDef("result_token", "token", since="13.4", doc="token ordered after the fence"),),
        assembly="$token attr-dict",
        description=(
            "A fence between memory accesses that reach the same memory through different "
            "virtual addresses (aliased mappings). Values are unchanged; ops that take the result "
            "token are ordered after those the input token orders. Bytecode 13.4+."
        ),
        examples=("%t1 = memory_fence_alias_tko %t0",),
    ),
    OpDef(
        "make_token",
        0x44,
        "13.1",
        summary="Fresh token with no dependencies",
        group="memory",
        results=(ResultDef("result", "token", doc="new token"),),
        assembly="attr-dict `:` custom<CudaTileType>(type($result))",
        traits=frozenset({"Pure"}),
        description=("Creates a token that orders nothing; token-ordered ops that take it may run at any point."),
        examples=("%t = make_token : token",),
    ),
    OpDef(
        "store_ptr_tko",
        0x65,
        "13.1",
        summary="Scatter store through a tile of pointers",
        group="memory",
        operands=(
            OperandDef("destination", "pointer_tile", doc="addresses to write"),
            OperandDef("value", "tile", doc="values to store"),
            OperandDef(
                "mask",
                "i1_tile",
                "optional",
                doc="optional i1 tile; lanes that are false are left out",
            ),
            OperandDef(
                "token",
                "token",
                "optional",
                doc="optional input token the op is ordered after",
            ),
        ),
        attributes=(
            AttrDef(
                "memory_ordering_semantics",
                "enum:memory_ordering_semantics",
                doc="weak, relaxed or release",
            ),
            AttrDef(
                "memory_scope",
                "enum:memory_scope",
                optional=True,
                doc="threads the access must be coherent with",
            ),
            AttrDef(
                "optimization_hints",
                "optimization_hints",
                optional=True,
                doc="per-architecture tuning hints",
            ),
        ),
        results=(
            ResultDef(
                "result_token",
                "token",
                doc="token that later token-ordered ops can depend on",
            ),
        ),
        assembly=(
            "$memory_ordering_semantics ($memory_scope^)? $destination `,` $value (`,` $mask^)? "
            "(`token` `` `=` `` $token^)? (`optimization_hints` `=` $optimization_hints^)? "
            "attr-dict `:` custom<CudaTileType>(type($destination)) `,` "
            "custom<CudaTileType>(type($value)) (`,` custom<CudaTileType>(type($mask))^)? `->` "
            "custom<CudaTileType>(type($result_token))"
        ),
        traits=frozenset({"AttrSizedOperandSegments"}),
        type_rules=(
            ("pointer_tile_of", ("destination", "value")),
            ("same_shape", ("mask", "destination"), "shape of 'destination' must match the shape of 'mask'"),
        ),
        description=(
            "Writes each element of `value` to the matching pointer of `destination`, skipping "
            "lanes where `mask` is false, and returns a token. i1 values occupy a byte each; the "
            "ordering is weak, relaxed or release."
        ),
        examples=("%t = store_ptr_tko weak %ptrs, %v : tile<8xptr<f32>>, tile<8xf32> -> token",),
    ),
)

# ================================================================================================
# Views: tensor views, tile views and view loads and stores
# ================================================================================================

_VIEW: tuple[OpDef, ...] = (
    OpDef(
        "get_index_space_shape",
        0x2D,
        "13.1",
        summary="Extents of a view's index space",
        group="view",
        operands=(OperandDef("src", "tile_view", doc="view to query"),),
        results=(
            ResultDef(
                "result",
                "scalar_int_tile",
                "variadic",
                doc="one extent per index dimension",
            ),
        ),
        assembly=None,
        traits=frozenset({"NoMemoryEffect"}),
        description=(
            "Returns one scalar integer tile per dimension of the index space of view `src`, read "
            "as unsigned; extents that do not fit the result element type are undefined."
        ),
        examples=(
            (
                "%n0, %n1 = get_index_space_shape %v : partition_view<tile=(4x4), "
                "tensor_view<?x?xf32, strides=[?,1]>> -> tile<i32>"
            ),
        ),
    ),
    OpDef(
        "get_tensor_shape",
        0x2F,
        "13.1",
        summary="Dimensions of a tensor_view",
        group="view",
        operands=(OperandDef("src", "tensor_view", doc="tensor view to query"),),
        results=(
            ResultDef(
                "result",
                "scalar_int_tile",
                "variadic",
                doc="one extent per tensor dimension",
            ),
        ),
        assembly=None,
        traits=frozenset({"NoMemoryEffect"}),
        description=(
            "Returns one scalar integer tile per dimension of the tensor behind `src`, read as "
            "unsigned; dimensions that do not fit the result element type are undefined."
        ),
        examples=(("%d0, %d1 = get_tensor_shape %tv : tensor_view<32x32xf32, strides=[32,1]> -> tile<i64>"),),
    ),
    OpDef(
        "load_view_tko",
        0x3E,
        "13.1",
        summary="Load one tile from a view",
        group="view",
        operands=(
            OperandDef("view", "tile_view", doc="view to read from"),
            OperandDef(
                "index",
                "int_tile",
                "variadic",
                doc="position of the tile in the view's index space",
            ),
            OperandDef(
                "token",
                "token",
                "optional",
                doc="optional input token the op is ordered after",
            ),
        ),
        attributes=(
            AttrDef(
                "memory_ordering_semantics",
                "enum:memory_ordering_semantics",
                doc="weak, relaxed or acquire",
            ),
            AttrDef(
                "memory_scope",
                "enum:memory_scope",
                optional=True,
                doc="threads the access must be coherent with",
            ),
            AttrDef(
                "optimization_hints",
                "optimization_hints",
                optional=True,
                doc="per-architecture tuning hints",
            ),
            AttrDef(
                "inbounds",
                "dense_bool_array",
                default="all false",  # absent from the IR when all false (and before 13.4)
                since="13.4",
                doc="per index: the tile lies wholly inside the view along it (13.4+; else undefined)",
            ),
        ),
        results=(
            ResultDef("tile", "tile", doc="loaded tile"),
            ResultDef(
                "result_token",
                "token",
                doc="token that later token-ordered ops can depend on",
            ),
        ),
        assembly=None,
        traits=frozenset({"AttrSizedOperandSegments"}),
        description=(
            "Loads the tile at `index` in the index space of a partition, strided or "
            "gather/scatter view and returns it with a token. Indices are unsigned integer tiles, "
            "scalar except at a gather/scatter view's sparse dimension, which takes a 1-D tile of "
            "row indices; out-of-bounds elements follow the view's padding rule."
        ),
        examples=(
            (
                "%t, %tok = load_view_tko weak %v[%i, %j] : partition_view<tile=(64x64), "
                "tensor_view<8192x128xf32, strides=[128,1]>>, tile<i32> -> tile<64x64xf32>, token"
            ),
        ),
    ),
    OpDef(
        "make_gather_scatter_view",
        0x73,
        "13.3",
        summary="Gather/scatter view over a tensor_view",
        group="view",
        operands=(OperandDef("tensor_view", "tensor_view", doc="tensor to view"),),
        results=(ResultDef("result", "gather_scatter_view", since="13.3", doc="the new view"),),
        assembly=None,
        traits=frozenset({"Pure"}),
        description=(
            "Builds a gather_scatter_view over `tensor_view`: tiles are full along every dimension "
            "except `sparse_dim`, where loads and stores pick arbitrary rows from an index tile. "
            "Tile shape and sparse dimension come from the result type. Added in 13.3."
        ),
        examples=(
            (
                "%g = make_gather_scatter_view %tv : gather_scatter_view<tile=(64x64), "
                "tensor_view<8192x128xf32, strides=[128,1]>, sparse_dim=0>"
            ),
        ),
    ),
    OpDef(
        "make_partition_view",
        0x42,
        "13.1",
        summary="Partition a tensor_view into a grid of tiles",
        group="view",
        operands=(OperandDef("tensor_view", "tensor_view", doc="tensor to partition"),),
        results=(ResultDef("result", "partition_view", doc="the new view"),),
        assembly=None,
        traits=frozenset({"Pure"}),
        description=(
            "Builds a partition_view that splits `tensor_view` into adjacent, non-overlapping "
            "tiles of the shape named in the result type, optionally with a dim_map and a padding "
            "value for out-of-bounds loads."
        ),
        examples=(
            ("%p = make_partition_view %tv : partition_view<tile=(64x64), tensor_view<8192x128xf32, strides=[128,1]>>"),
        ),
    ),
    OpDef(
        "make_strided_view",
        0x74,
        "13.3",
        summary="View of tiles placed at fixed strides over a tensor_view",
        group="view",
        operands=(OperandDef("tensor_view", "tensor_view", since="13.3", doc="tensor to view"),),
        results=(ResultDef("result", "strided_view", since="13.3", doc="the new view"),),
        assembly=None,
        traits=frozenset({"Pure"}),
        description=(
            "Builds a strided_view whose tiles start every `traversal_strides` elements along each "
            "dimension, so tiles may leave gaps or overlap; tile shape, strides, dim_map and "
            "padding come from the result type. Added in 13.3."
        ),
        examples=(
            (
                "%s = make_strided_view %tv : strided_view<tile=(128), traversal_strides=[64], "
                "tensor_view<1024xf32, strides=[1]>>"
            ),
        ),
    ),
    OpDef(
        "make_tensor_view",
        0x43,
        "13.1",
        summary="Describe a global-memory tensor from a base pointer",
        group="view",
        operands=(
            OperandDef("base", "scalar_pointer_tile", doc="pointer to the first element"),
            OperandDef(
                "dynamicShape",
                "scalar_int_tile",
                "variadic",
                doc="values for the `?` extents",
            ),
            OperandDef(
                "dynamicStrides",
                "scalar_int_tile",
                "variadic",
                doc="values for the `?` strides",
            ),
        ),
        results=(ResultDef("result", "tensor_view", doc="the tensor view"),),
        assembly=None,
        traits=frozenset({"AttrSizedOperandSegments", "NoMemoryEffect"}),
        description=(
            "Builds a tensor_view from the scalar pointer `base` and a shape and strides. Entries "
            "written as constants appear in the result type; entries passed as values "
            "(`dynamicShape`, `dynamicStrides`, unsigned, all of one integer type) appear as `?`."
        ),
        examples=(
            (
                "%tv = make_tensor_view %base, shape = [%m, 32], strides = [32, 1] : tile<i64> -> "
                "tensor_view<?x32xf32, strides=[32,1]>"
            ),
        ),
    ),
    OpDef(
        "store_view_tko",
        0x66,
        "13.1",
        summary="Store one tile into a view",
        group="view",
        operands=(
            OperandDef("tile", "tile", doc="tile to store"),
            OperandDef("view", "tile_view", doc="view to write to"),
            OperandDef(
                "index",
                "int_tile",
                "variadic",
                doc="position of the tile in the view's index space",
            ),
            OperandDef(
                "token",
                "token",
                "optional",
                doc="optional input token the op is ordered after",
            ),
        ),
        attributes=(
            AttrDef(
                "memory_ordering_semantics",
                "enum:memory_ordering_semantics",
                doc="weak, relaxed or release",
            ),
            AttrDef(
                "memory_scope",
                "enum:memory_scope",
                optional=True,
                doc="threads the access must be coherent with",
            ),
            AttrDef(
                "optimization_hints",
                "optimization_hints",
                optional=True,
                doc="per-architecture tuning hints",
            ),
            AttrDef(
                "inbounds",
                "dense_bool_array",
                default="all false",  # absent from the IR when all false (and before 13.4)
                since="13.4",
                doc="per index: the tile lies wholly inside the view along it (13.4+; else undefined)",
            ),
        ),
        results=(
            ResultDef(
                "result_token",
                "token",
                doc="token that later token-ordered ops can depend on",
            ),
        ),
        assembly=None,
        traits=frozenset({"AttrSizedOperandSegments"}),
        description=(
            "Writes `tile` to the position `index` of a partition, strided or gather/scatter view "
            "and returns a token. Indices follow the same rules as `load_view_tko`, and elements "
            "that fall outside the tensor are not written."
        ),
        examples=(
            (
                "%tok = store_view_tko weak %t, %v[%i, %j] : tile<64x64xf32>, "
                "partition_view<tile=(64x64), tensor_view<8192x128xf32, strides=[128,1]>>, "
                "tile<i32> -> token"
            ),
        ),
    ),
)

# ================================================================================================
# Atomics
# ================================================================================================

_ATOMICS: tuple[OpDef, ...] = (
    OpDef(
        "atomic_cas_tko",
        0x07,
        "13.1",
        summary="Atomic compare-and-swap through a tile of pointers",
        group="atomics",
        operands=(
            OperandDef("pointers", "pointer_tile", doc="tile of addresses to update"),
            OperandDef("cmp", "tile", doc="expected old values"),
            OperandDef("val", "tile", doc="values stored where the comparison succeeds"),
            OperandDef(
                "mask",
                "i1_tile",
                "optional",
                doc="optional i1 tile; lanes that are false are left out",
            ),
            OperandDef(
                "token",
                "token",
                "optional",
                doc="optional input token the op is ordered after",
            ),
        ),
        attributes=(
            AttrDef(
                "memory_ordering_semantics",
                "enum:memory_ordering_semantics",
                doc="relaxed, acquire, release or acq_rel",
            ),
            AttrDef("memory_scope", "enum:memory_scope", doc="threads the atomic is coherent with"),
        ),
        results=(
            ResultDef("result", "tile", doc="values found in memory before the operation"),
            ResultDef(
                "result_token",
                "token",
                doc="token that later token-ordered ops can depend on",
            ),
        ),
        assembly=(
            "$memory_ordering_semantics $memory_scope $pointers `,` $cmp `,` $val (`,` $mask^)? "
            "(`token` `` `=` `` $token^)? attr-dict `:` custom<CudaTileType>(type($pointers)) `,` "
            "custom<CudaTileType>(type($val)) (`,` custom<CudaTileType>(type($mask))^)? `->` "
            "custom<CudaTileType>(type($result)) `,` custom<CudaTileType>(type($result_token))"
        ),
        traits=frozenset({"AttrSizedOperandSegments"}),
        type_rules=(
            ("same_shape", ("pointers", "cmp", "val", "result")),
            ("same_type", ("cmp", "val", "result")),
        ),
        description=(
            "For each lane, atomically reads `*pointer`, writes `val` there if the old value "
            "equals `cmp` (bitwise equality, also for floats) and returns the old value together "
            "with a token. Element types are i32, i64, f32 or f64; lanes turned off by `mask` "
            "return `cmp`. The op is ordered against other memory operations only through tokens."
        ),
        examples=(
            (
                "%old, %t = atomic_cas_tko relaxed device %ptrs, %cmp, %val : tile<8xptr<i32>>, "
                "tile<8xi32> -> tile<8xi32>, token"
            ),
        ),
    ),
    OpDef(
        "atomic_red_view_tko",
        0x75,
        "13.3",
        summary="Atomic reduction of a tile into a view, without returning old values",
        group="atomics",
        operands=(
            OperandDef(
                "view",
                "tile_view",
                since="13.3",
                doc="partition or strided view to reduce into",
            ),
            OperandDef(
                "index",
                "int_tile",
                "variadic",
                since="13.3",
                doc="scalar integer indices of the target tile, read as unsigned",
            ),
            OperandDef(
                "value",
                "tile",
                since="13.3",
                doc="tile combined into memory; matches the view's tile",
            ),
            OperandDef(
                "token",
                "token",
                "optional",
                since="13.3",
                doc="optional input token the op is ordered after",
            ),
        ),
        attributes=(
            AttrDef(
                "memory_ordering_semantics",
                "enum:memory_ordering_semantics",
                since="13.3",
                doc="must be relaxed",
            ),
            AttrDef("memory_scope", "enum:memory_scope", since="13.3", doc="tl_blk or device"),
            AttrDef("mode", "enum:atomic_rmw_mode", since="13.3", doc="combining operation"),
        ),
        results=(
            ResultDef(
                "result_token",
                "token",
                since="13.3",
                doc="token that later token-ordered ops can depend on",
            ),
        ),
        assembly=None,
        traits=frozenset({"AttrSizedOperandSegments"}),
        description=(
            "Atomically combines each element of `value` into the tile of `view` selected by "
            "`index`, using `mode` (add, addf, and, or, xor, max, min, umax, umin). The view must "
            "be a partition or strided view without padding; ordering must be relaxed and the "
            "scope tl_blk or device. Added in 13.3."
        ),
        examples=(
            (
                "%t = atomic_red_view_tko relaxed device %view[%i, %j], addf, %v : "
                "tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<8192x128xf32, "
                "strides=[128,1]>>, tile<i32> -> token"
            ),
        ),
    ),
    OpDef(
        "atomic_rmw_tko",
        0x08,
        "13.1",
        summary="Atomic read-modify-write through a tile of pointers",
        group="atomics",
        operands=(
            OperandDef("pointers", "pointer_tile", doc="tile of addresses to update"),
            OperandDef("arg", "tile", doc="second operand of the combining operation"),
            OperandDef(
                "mask",
                "i1_tile",
                "optional",
                doc="optional i1 tile; lanes that are false are left out",
            ),
            OperandDef(
                "token",
                "token",
                "optional",
                doc="optional input token the op is ordered after",
            ),
        ),
        attributes=(
            AttrDef(
                "memory_ordering_semantics",
                "enum:memory_ordering_semantics",
                doc="relaxed, acquire, release or acq_rel",
            ),
            AttrDef("memory_scope", "enum:memory_scope", doc="threads the atomic is coherent with"),
            AttrDef("mode", "enum:atomic_rmw_mode", doc="combining operation"),
        ),
        results=(
            ResultDef("result", "tile", doc="values found in memory before the operation"),
            ResultDef(
                "result_token",
                "token",
                doc="token that later token-ordered ops can depend on",
            ),
        ),
        assembly=(
            "$memory_ordering_semantics $memory_scope $pointers `,` $mode `,` $arg (`,` $mask^)? "
            "(`token` `` `=` `` $token^)? attr-dict `:` custom<CudaTileType>(type($pointers)) `,` "
            "custom<CudaTileType>(type($arg)) (`,` custom<CudaTileType>(type($mask))^)? `->` "
            "custom<CudaTileType>(type($result)) `,` custom<CudaTileType>(type($result_token))"
        ),
        traits=frozenset({"AttrSizedOperandSegments"}),
        type_rules=(
            ("same_shape", ("pointers", "arg", "result")),
            ("same_type", ("arg", "result")),
        ),
        description=(
            "For each lane, atomically combines `*pointer` with `arg` using `mode` (add, addf, "
            "and, or, xor, max, min, umax, umin or xchg), stores the outcome and returns the "
            "previous value with a token. Integer modes take i32/i64, `addf` f16/bf16/f32/f64 and "
            "`xchg` i32/i64/f32/f64; lanes off in `mask` are skipped and their result is "
            "unspecified."
        ),
        examples=(
            (
                "%old, %t = atomic_rmw_tko relaxed device %ptrs, addf, %vals : tile<8xptr<f32>>, "
                "tile<8xf32> -> tile<8xf32>, token"
            ),
        ),
    ),
)

# ================================================================================================
# Miscellaneous
# ================================================================================================

_MISC: tuple[OpDef, ...] = (
    OpDef(
        "assume",
        0x06,
        "13.1",
        summary="Attach an unchecked fact to a value",
        group="misc",
        operands=(OperandDef("value", "any", doc="value the fact is about"),),
        attributes=(AttrDef("predicate", "assume_predicate", doc="the assumed property"),),
        results=(ResultDef("result", "any", doc="the same value, carrying the fact"),),
        assembly=("custom<AssumePredicate>($predicate) `,` $value attr-dict `:` custom<CudaTileType>(type($value))"),
        type_rules=(("same_type", ("value", "result")),),
        description=(
            "Returns `value` unchanged, tagged with `predicate` (div_by, same_elements or bounded) "
            "that the compiler may rely on. Nothing checks the fact: if it is false, behaviour is "
            "undefined."
        ),
        examples=("%q = assume div_by<16>, %p : tile<ptr<f32>>",),
    ),
    OpDef(
        "print_tko",
        0x55,
        "13.1",
        summary="Formatted print for debugging",
        group="misc",
        operands=(
            OperandDef("args", "tile", "variadic", doc="tiles to print"),
            OperandDef(
                "token",
                "token",
                "optional",
                since="13.2",
                doc="optional input token the op is ordered after",
            ),
        ),
        attributes=(AttrDef("str", "string", doc="format string"),),
        results=(
            ResultDef(
                "result_token",
                "token",
                since="13.2",
                doc="token that later token-ordered ops can depend on",
            ),
        ),
        assembly=(
            "$str (`,` $args^)? (`token` `` `=` `` $token^)? attr-dict (`:` "
            "custom<CudaTileType>(type($args))^)? `->` custom<CudaTileType>(type($result_token))"
        ),
        traits=frozenset({"AttrSizedOperandSegments"}),
        description=(
            "Prints the printf-style format `str`, filling its `%` conversions from `args` in "
            "order, and returns a token; it is ordered only through tokens and output of "
            "concurrent prints may interleave. Named `print` before 13.2, which also added the "
            "tokens."
        ),
        examples=('%t = print_tko "x = %f\\n", %x : tile<4xf32> -> token',),
    ),
)

# ================================================================================================
# Testing ops (TILE_IR_INCLUDE_TESTS builds only; opcodes 0x3000+)
# ================================================================================================

_TESTING: tuple[OpDef, ...] = (
    OpDef(
        "testing$bytecode_test_evolution",
        0x3002,
        "250.0",
        summary="Test op that gains operands, attributes and a result across versions",
        group="testing",
        operands=(
            OperandDef(
                "inputs",
                "tile",
                "variadic",
                since="250.0",
                doc="tiles present since 250.0",
            ),
            OperandDef(
                "optional_token",
                "token",
                "optional",
                since="250.1",
                doc="optional token added in 250.1",
            ),
        ),
        attributes=(
            AttrDef(
                "new_attr",
                "i32",
                optional=True,
                since="250.1",
                doc="optional i32 added in 250.1",
            ),
            AttrDef(
                "priority",
                "enum:bytecode_test_priority",
                optional=True,
                since="250.0",
                doc="optional test enum",
            ),
            AttrDef(
                "test_attr",
                "bytecode_test_value",
                optional=True,
                since="250.1",
                doc="optional test attribute added in 250.1",
            ),
        ),
        results=(ResultDef("result_token", "token", since="250.1", doc="token result (250.1)"),),
        assembly=(
            "`(` $inputs `:` type($inputs) `)` (`new_attr` `=` $new_attr^)? (`token` `=` "
            "$optional_token^ `:` custom<CudaTileType>(type($optional_token)))? (`priority` `=` "
            "$priority^)? (`test_attr` `=` $test_attr^)? `->` "
            "custom<CudaTileType>(type($result_token)) attr-dict"
        ),
        traits=frozenset({"AttrSizedOperandSegments"}),
        description=(
            "Takes variadic tile inputs and, from test version 250.1 on, an optional token, an i32 "
            "attribute, a test attribute and a token result; used to check bytecode compatibility "
            "as ops evolve. Test builds only."
        ),
        examples=("%t = testing$bytecode_test_evolution(%x : !cuda_tile.tile<2xf32>) -> token",),
    ),
    OpDef(
        "testing$bytecode_test_new_attribute",
        0x3000,
        "250.0",
        summary="Test op whose attributes appear in a later bytecode version",
        group="testing",
        attributes=(
            AttrDef("new_flag", "unit", optional=True, since="250.1", doc="flag added in 250.1"),
            AttrDef(
                "new_param",
                "i32",
                default="42",
                since="250.1",
                doc="i32 parameter added in 250.1 (default 42)",
            ),
        ),
        assembly="(`new_flag` $new_flag^)? (`new_param` `=` $new_param^)? attr-dict",
        description=(
            "Carries a unit flag and an i32 parameter (default 42) that both arrived in test "
            "version 250.1, to check that bytecode of 250.0 and 250.1 round-trips. Test builds "
            "only."
        ),
        examples=("testing$bytecode_test_new_attribute new_flag new_param = 123",),
    ),
    OpDef(
        "testing$func",
        0x3001,
        "250.0",
        summary="Function-like op for the dialect's own tests",
        group="testing",
        attributes=(
            AttrDef("sym_name", "symbol", since="250.0", doc="function name"),
            AttrDef("function_type", "function_type", since="250.0", doc="signature"),
            AttrDef(
                "arg_attrs",
                "array",
                optional=True,
                since="250.0",
                doc="per-argument attribute dictionaries (unused)",
            ),
            AttrDef(
                "res_attrs",
                "array",
                optional=True,
                since="250.0",
                doc="per-result attribute dictionaries (unused)",
            ),
        ),
        regions=(RegionDef("body", doc="function body"),),
        assembly=None,
        traits=frozenset(
            {
                "IsolatedFromAbove",
                "FunctionOpInterface",
                "SingleBlock",
                "SingleBlockImplicitTerminator:ReturnOp",
            }
        ),
        description=(
            "A named, isolated function with one body block ending in `return`, used by the "
            "bytecode and verifier tests. It exists only in builds with TILE_IR_INCLUDE_TESTS."
        ),
        examples=("testing$func @f(%a: !cuda_tile.tile<f32>) {\n  return\n}",),
    ),
)

# Every op, grouped as above.
ALL_OPS: tuple[OpDef, ...] = (
    *_CORE,
    *_CONTROL_FLOW,
    *_FLOATING_POINT,
    *_INTEGER,
    *_BITWISE,
    *_CONVERSION,
    *_MEMORY,
    *_VIEW,
    *_ATOMICS,
    *_MISC,
    *_TESTING,
)
