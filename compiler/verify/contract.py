"""The frontend contract: what tileiras expects around and inside a cuda_tile module.

A producer wraps its `cuda_tile.module` in a `builtin.module` whose attributes carry the
kernel-launch metadata (spec chapter "Frontend Contract and Tile IR Emission"):

    module attributes {nv_tileaa.compute_capability = 90 : i32, tt.num_warps = 4 : i32} {
      cuda_tile.module @m { ... }
    }

Checked here, each at the attribute's own range:

* `nv_tileaa.compute_capability`: an integer, `major * 10 + minor`, of a known SM (error
  otherwise; a string such as `"sm_90"` gets a fix to `90 : i32`);
* `nv_tileaa.target_spec`, the fallback: a string `"sm_XX"` of a known SM; when both are
  given the fallback is ignored (warning, or error when they disagree);
* `tt.num_warps` a power of two from 1 to 32, `tt.num_ctas` from 1 to 16,
  `tt.cluster_dim` three positive i32 (`array<i32: X, Y, Z>`) whose product is
  `tt.num_ctas` when both are given, `tt.num_stages` a positive integer (a warning: it
  is advisory);
* keys tileiras does not read are silently ignored by it, so they are warnings: an
  unknown `tt.*` or `nv_tileaa.*` key (with a fix when it is a misspelling of a known
  one), and a launch attribute under another namespace (`myfe.num_warps`, whose value
  tileiras never sees: fix renames it to `tt.num_warps`);
* the internal lowering dialects (nv_tileaa, nv_tileas, cute, cute_nvgpu, cutlass,
  nvgpu, nvvm, llvm) are not legal input: any op of theirs, or type or attribute value
  of theirs, is an error `unregistered dialect: <name>`, as tileiras reports it;
* a kernel or global whose name is not a PTX identifier (`@"a.b"`, `@"1x"`): the dialect
  accepts any string, but tileiras 13.5 refuses the module with nothing but "failed to
  compile Tile IR program" (a warning, at the name; the Triton lowering writes such names
  as identifiers of its own and compiles them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation
from ..ir.diagnostics import Fix, Related, Severity, TextEdit
from ..ir.source import Span
from .engine import Verifier
from .registry import module_check, op_verifier
from .structure import symbol_name

# Compute capabilities tileiras knows, as `major * 10 + minor`.
KNOWN_SMS = (70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121)

INTERNAL_DIALECTS = ("nv_tileaa", "nv_tileas", "cute", "cute_nvgpu", "cutlass", "nvgpu", "nvvm", "llvm")

COMPUTE_CAPABILITY = "nv_tileaa.compute_capability"
TARGET_SPEC = "nv_tileaa.target_spec"

# The launch attributes tileiras reads under `tt.` (the Triton frontend's extensions too).
LAUNCH_KEYS = ("num_warps", "num_ctas", "cluster_dim", "num_stages")
TT_KEYS = (*LAUNCH_KEYS, "cluster_size", "is_persistent", "dump_intermediate")
NV_TILEAA_MODULE_KEYS = ("compute_capability", "target_spec")

MAX_WARPS = 32  # 1024 threads per CTA
MAX_CLUSTER = 16


@module_check
def check_contract(v: Verifier) -> None:
    for op in v.top_ops():
        if op.name == "builtin.module":
            _check_module_attributes(v, op)
    for op in v.walk():
        _check_internal_dialects(v, op)


# ---------------------------------------------------------------------------- spans


def _header(v: Verifier, op: Operation) -> tuple[str, int, int] | None:
    """(source text, start, end) of the op's text before its first region."""
    if v.source is None or op.span is None:
        return None
    end = op.span.end
    if op.regions and op.regions[0].span is not None:
        end = op.regions[0].span.start
    return v.source.text, op.span.start, end


def _entry_spans(v: Verifier, op: Operation, name: str) -> tuple[Span, Span] | None:
    """The ranges of `name` and of its value in the op's attribute dictionary."""
    header = _header(v, op)
    if header is None:
        return None
    text, start, end = header
    pattern = r"(?<![\w$.])(" + re.escape(name) + "|" + re.escape(f'"{name}"') + r")(?![\w$.])\s*(=\s*)?"
    m = re.compile(pattern).search(text, start, end)
    if m is None:
        return None
    key = Span(m.start(1), m.end(1))
    if not m.group(2):
        return key, key  # a unit attribute: no value
    value_start = m.end()
    depth = 0
    i = value_start
    in_string = False
    while i < end:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            break
        i += 1
    value_end = i
    while value_end > value_start and text[value_end - 1].isspace():
        value_end -= 1
    return key, Span(value_start, value_end)


def _key_span(v: Verifier, op: Operation, name: str) -> Span | None:
    spans = _entry_spans(v, op, name)
    return spans[0] if spans else None


def _value_span(v: Verifier, op: Operation, name: str) -> Span | None:
    spans = _entry_spans(v, op, name)
    return spans[1] if spans else None


# ---------------------------------------------------------------------------- module attributes


def _int_value(attr: A.Attribute) -> int | None:
    return attr.value if isinstance(attr, A.IntegerAttr) else None


def _shown(attr: A.Attribute) -> str:
    """An attribute's value as a message shows it (integers without their type)."""
    return str(attr.value) if isinstance(attr, A.IntegerAttr) else str(attr)


def _sm_from_string(text: str) -> int | None:
    m = re.fullmatch(r"sm_(\d+)[af]?", text)
    return int(m.group(1)) if m else None


def _known_sms() -> str:
    return ", ".join(str(sm) for sm in KNOWN_SMS)


def _error(v: Verifier, op: Operation, message: str, name: str, code: str, **kwargs) -> None:
    span = _value_span(v, op, name)
    v.emit(op, message, at=span, code=code, prefix=False, **kwargs)


def _warning(v: Verifier, op: Operation, message: str, span: Span | None, code: str, **kwargs) -> None:
    v.emit(op, message, severity=Severity.WARNING, at=span, code=code, prefix=False, **kwargs)


def _replace_value(v: Verifier, op: Operation, name: str, title: str, new_text: str) -> list[Fix]:
    span = _value_span(v, op, name)
    if span is None:
        return []
    return [Fix(title, (TextEdit(span, new_text),))]


def _check_module_attributes(v: Verifier, op: Operation) -> None:
    attrs = op.attributes
    capability = _check_compute_capability(v, op, attrs.get(COMPUTE_CAPABILITY))
    _check_target_spec(v, op, attrs.get(TARGET_SPEC), capability)
    warps = attrs.get("tt.num_warps")
    if warps is not None:
        n = _int_value(warps)
        if n is None or n < 1 or n > MAX_WARPS or n & (n - 1):
            _error(
                v,
                op,
                f"tt.num_warps must be a power of two from 1 to {MAX_WARPS}, got {_shown(warps)}",
                "tt.num_warps",
                "launch-attribute",
            )
    ctas = attrs.get("tt.num_ctas")
    num_ctas = _int_value(ctas) if ctas is not None else None
    if ctas is not None and (num_ctas is None or not 1 <= num_ctas <= MAX_CLUSTER):
        _error(
            v,
            op,
            f"tt.num_ctas must be an integer from 1 to {MAX_CLUSTER}, got {_shown(ctas)}",
            "tt.num_ctas",
            "launch-attribute",
        )
        num_ctas = None
    cluster = attrs.get("tt.cluster_dim")
    if cluster is not None:
        dims = _cluster_dims(cluster)
        if dims is None:
            _error(
                v,
                op,
                f"tt.cluster_dim must be three positive i32 values (array<i32: X, Y, Z>), got {cluster}",
                "tt.cluster_dim",
                "launch-attribute",
            )
        elif num_ctas is not None and dims[0] * dims[1] * dims[2] != num_ctas:
            _warning(
                v,
                op,
                f"tt.cluster_dim {list(dims)} holds {dims[0] * dims[1] * dims[2]} CTAs but tt.num_ctas is {num_ctas}",
                _value_span(v, op, "tt.cluster_dim"),
                "launch-attribute",
                related=_related(v, op, "tt.num_ctas", "tt.num_ctas is set here"),
            )
    stages = attrs.get("tt.num_stages")
    if stages is not None:
        n = _int_value(stages)
        if n is None or n < 1:
            _warning(
                v,
                op,
                f"tt.num_stages must be a positive integer, got {_shown(stages)}; the scheduler ignores it",
                _value_span(v, op, "tt.num_stages"),
                "launch-attribute",
            )
    for name in attrs:
        _check_unread_key(v, op, name)


def _related(v: Verifier, op: Operation, name: str, message: str) -> list[Related]:
    span = _value_span(v, op, name)
    return [Related(message, span, v.source)] if span is not None else []


def _check_compute_capability(v: Verifier, op: Operation, attr: A.Attribute | None) -> int | None:
    if attr is None:
        return None
    if isinstance(attr, A.StringAttr):
        sm = _sm_from_string(attr.value)
        fixes = _replace_value(v, op, COMPUTE_CAPABILITY, f"Write it as `{sm} : i32`", f"{sm} : i32") if sm else []
        _error(
            v,
            op,
            f"{COMPUTE_CAPABILITY} must be an integer (major * 10 + minor, e.g. 90 : i32), got {_shown(attr)}",
            COMPUTE_CAPABILITY,
            "compute-capability",
            fixes=fixes,
        )
        return None
    value = _int_value(attr)
    if value is None:
        _error(
            v,
            op,
            f"{COMPUTE_CAPABILITY} must be an integer (major * 10 + minor, e.g. 90 : i32), got {_shown(attr)}",
            COMPUTE_CAPABILITY,
            "compute-capability",
        )
        return None
    if value not in KNOWN_SMS:
        _error(
            v,
            op,
            f"{COMPUTE_CAPABILITY} = {value} is not a known compute capability (known: {_known_sms()})",
            COMPUTE_CAPABILITY,
            "compute-capability",
        )
        return None
    return value


def _check_target_spec(v: Verifier, op: Operation, attr: A.Attribute | None, capability: int | None) -> None:
    if attr is None:
        return
    sm = _sm_from_string(attr.value) if isinstance(attr, A.StringAttr) else None
    if sm is None:
        _error(v, op, f'{TARGET_SPEC} must be a string "sm_XX", got {_shown(attr)}', TARGET_SPEC, "compute-capability")
        return
    if sm not in KNOWN_SMS:
        _error(
            v,
            op,
            f"{TARGET_SPEC} {attr} is not a known compute capability (known: {_known_sms()})",
            TARGET_SPEC,
            "compute-capability",
        )
        return
    if COMPUTE_CAPABILITY not in op.attributes:
        return
    related = _related(v, op, COMPUTE_CAPABILITY, f"{COMPUTE_CAPABILITY} is set here")
    if capability is not None and capability != sm:
        _error(
            v,
            op,
            f"{TARGET_SPEC} {attr} disagrees with {COMPUTE_CAPABILITY} = {capability}, which takes precedence",
            TARGET_SPEC,
            "compute-capability",
            related=related,
        )
    else:
        _warning(
            v,
            op,
            f"{TARGET_SPEC} is ignored when {COMPUTE_CAPABILITY} is present",
            _key_span(v, op, TARGET_SPEC),
            "ignored-attribute",
            related=related,
        )


def _cluster_dims(attr: A.Attribute) -> tuple[int, int, int] | None:
    values: list[int] = []
    if isinstance(attr, A.DenseArrayAttr):
        if attr.element != T.I32:
            return None
        values = list(attr.values)
    elif isinstance(attr, A.ArrayAttr):
        for item in attr.elements:
            n = _int_value(item)
            if n is None:
                return None
            values.append(n)
    else:
        return None
    if len(values) != 3 or any(x < 1 for x in values):
        return None
    return values[0], values[1], values[2]


def _check_unread_key(v: Verifier, op: Operation, name: str) -> None:
    """Warn about a module attribute tileiras never reads, though it looks meant for it."""
    namespace, _, key = name.partition(".")
    if not key:
        return
    if namespace == "tt":
        known = TT_KEYS
    elif namespace == "nv_tileaa":
        known = NV_TILEAA_MODULE_KEYS
    elif key in LAUNCH_KEYS:
        span = _key_span(v, op, name)
        fixes = [Fix(f"Rename to `tt.{key}`", (TextEdit(span, f"tt.{key}"),))] if span else []
        _warning(
            v,
            op,
            f"'{name}' is not read by tileiras, which takes kernel-launch attributes under 'tt.' "
            f"(tt.{key}); the default applies",
            span,
            "ignored-attribute",
            fixes=fixes,
        )
        return
    else:
        return
    if key in known:
        return
    span = _key_span(v, op, name)
    import difflib  # only for a misspelled key: its import costs every `check` ~5 ms

    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    fixes = []
    hint = ""
    if close:
        hint = f"; did you mean '{namespace}.{close[0]}'?"
        if span is not None:
            fixes = [Fix(f"Rename to `{namespace}.{close[0]}`", (TextEdit(span, f"{namespace}.{close[0]}"),))]
    _warning(
        v, op, f"unknown module attribute '{name}' is ignored by tileiras{hint}", span, "ignored-attribute", fixes=fixes
    )


# ---------------------------------------------------------------------------- internal dialects


def _dialect_of(name: str) -> str:
    return name.lstrip("!#").split(".", 1)[0].split("<", 1)[0]


def _internal(name: str) -> str | None:
    dialect = _dialect_of(name)
    return dialect if dialect in INTERNAL_DIALECTS else None


_SCALARS = (T.IntegerType, T.FloatType)


def _opaque_names(t: T.Type) -> Iterator[str]:
    if isinstance(t, T.OpaqueType):
        yield t.text
    elif isinstance(t, T.TileType):
        yield from _opaque_names(t.element)
    elif isinstance(t, T.PointerType):
        yield from _opaque_names(t.pointee)
    elif isinstance(t, T.FunctionType):
        for part in (*t.inputs, *t.results):
            yield from _opaque_names(part)


def _check_internal_dialects(v: Verifier, op: Operation) -> None:
    dialect = _internal(op.name)
    if dialect is not None:
        v.emit(
            op,
            f"unregistered dialect: {dialect}",
            at=op.name_span,
            code="internal-dialect",
            prefix=False,
        )
        return
    block_args = [arg for region in op.regions for block in region.blocks for arg in block.arguments]
    for value in [*op.results, *block_args]:
        t = value.type
        if t.__class__ is T.TileType and t.element.__class__ in _SCALARS:
            continue  # no opaque type in it (the common case, decided without a walk)
        for text in _opaque_names(t):
            dialect = _internal(text) if text.startswith("!") else None
            if dialect is not None:
                v.emit(
                    op,
                    f"unregistered dialect: {dialect} (type {text})",
                    at=value,
                    code="internal-dialect",
                    prefix=False,
                )
                return
    for attrs in (op.properties, op.attributes):
        for name, attr in attrs.items():
            if isinstance(attr, A.OpaqueAttr):
                text = str(attr)
                dialect = _internal(text) if text.startswith("#") else None
                if dialect is not None:
                    v.emit(
                        op,
                        f"unregistered dialect: {dialect} (attribute value {text})",
                        at=_value_span(v, op, name),
                        code="internal-dialect",
                        prefix=False,
                    )
                    return


# ---------------------------------------------------------------------------- PTX names

# What tileiras compiles as a kernel's or a global's name, probed with tileiras 13.5 (`a$b`,
# `_1`, `$a`, `add` compile; `a.b`, `a-b`, `1x`, `_`, `$`, `%x`, `é`, `a b` do not): PTX's
# identifiers, but for those starting with `%`.
_PTX_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_$]*|[_$][A-Za-z0-9_$]+")
_NAMED = {"cuda_tile.entry": "kernel", "cuda_tile.global": "global"}


def misnamed(op: Operation) -> str | None:
    """ "kernel" or "global" when `op` is one whose name tileiras refuses (not a PTX
    identifier), else None. The tileiras backend explains its failures with it too."""
    what = _NAMED.get(op.name)
    name = symbol_name(op) if what is not None else None
    return what if name is not None and _PTX_NAME_RE.fullmatch(name) is None else None


@op_verifier("entry", "global")
def _check_ptx_name(v: Verifier, op: Operation) -> None:
    what = misnamed(op)
    if what is None:
        return
    name = symbol_name(op)
    span = _symbol_span(v, op)
    fixes = []
    if span is not None and what == "kernel":  # nothing in the module names a kernel
        new = "@" + _ptx_name(op, name)  # type: ignore[arg-type]
        fixes = [Fix(f"Rename to {new}", (TextEdit(span, new),))]
    _warning(
        v,
        op,
        f"tileiras cannot compile a {what} named '{name}': the name must be a PTX identifier (letters, "
        "digits, '_' and '$', starting with a letter, or with '_' or '$' and one more character)",
        span,
        "ptx-name",
        fixes=fixes,
    )


def _symbol_span(v: Verifier, op: Operation) -> Span | None:
    """The `@name` token right after the op's name."""
    header = _header(v, op)
    if header is None or op.name_span is None:
        return None
    from ..text.lexer import SYMBOL, Lexer

    text, _, end = header
    tok = Lexer(text).token_at(op.name_span.end)
    return tok.span if tok.kind == SYMBOL and tok.end <= end else None


def _ptx_name(op: Operation, name: str) -> str:
    """`name` as a PTX identifier that names nothing else in the symbol table `op` stands in."""
    base = re.sub(r"[^A-Za-z0-9_$]", "_", name)
    if not base or not base[0].isalpha():
        base = "k" + base
    table = op.parent.ops if op.parent is not None else [op]
    taken = {symbol_name(item) for item in table}
    new, n = base, 1
    while new in taken:
        new, n = f"{base}_{n}", n + 1
    return new
