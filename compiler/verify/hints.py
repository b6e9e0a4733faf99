"""Optimization hints: `optimization_hints=<sm_100 = {num_cta_in_cga = 2}>`.

What cuda-tile-opt checks, and how loudly, depends on its flags, mirrored by
`VerifyOptions.unsupported_hints`:

* "silent" (the default): hints are not checked at all; unknown or invalid ones are
  simply ignored by the compiler.
* "warn" (`-Wunsupported-hints`): each problem is a warning at the op: an architecture
  key that is not known (`unknown hint key sm_100a`), a hint the op does not take
  (`num_qqq is not known hint for current Operation`), a value of the wrong kind or out
  of range (`expected power-of-two ≤ 16 for sm_100.num_cta_in_cga`).
* "error" (`-Werr-hints`): the same warnings, and the first architecture entry that drew
  one also fails the op: `'cuda_tile.entry' op Optimization hints verification failed`.

Which hints each op takes: `entry` num_cta_in_cga, num_worker_warps_per_cta and occupancy;
`load_view_tko` / `store_view_tko` latency and allow_tma; `load_ptr_tko` /
`store_ptr_tko` latency.

`verify_hints(v, op)` is public so that an op verifier may call it at the point where
MLIR's verify() does; it is also registered here for the five ops (before the other rules
of the pointer load/store ops, after those of entry and the view load/store ops, as
MLIR orders them).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation
from ..ir.diagnostics import Severity
from ..ir.source import Span
from .engine import Verifier
from .registry import op_verifier

# Architecture keys a hint dictionary may have (`default` applies to any target).
KNOWN_ARCHS = ("sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110", "sm_120", "sm_121")
DEFAULT_KEY = "default"

NUM_CTA_IN_CGA = "num_cta_in_cga"
NUM_WORKER_WARPS = "num_worker_warps_per_cta"
ALLOW_TMA = "allow_tma"
LATENCY = "latency"
OCCUPANCY = "occupancy"

# The hints each op takes.
HINTS_FOR_OP: dict[str, tuple[str, ...]] = {
    "cuda_tile.entry": (NUM_CTA_IN_CGA, NUM_WORKER_WARPS, OCCUPANCY),
    "cuda_tile.load_view_tko": (LATENCY, ALLOW_TMA),
    "cuda_tile.store_view_tko": (LATENCY, ALLOW_TMA),
    "cuda_tile.load_ptr_tko": (LATENCY,),
    "cuda_tile.store_ptr_tko": (LATENCY,),
}

# Ampere and Ada have no clusters: one CTA per CGA.
_SINGLE_CTA_ARCHS = ("sm_80", "sm_86", "sm_87", "sm_88", "sm_89")

VERIFICATION_FAILED = "Optimization hints verification failed"


def _int_value(attr: A.Attribute) -> int | None:
    """The value of an integer attribute (a boolean counts, as MLIR's BoolAttr is one)."""
    if isinstance(attr, A.IntegerAttr):
        return attr.value
    if isinstance(attr, A.BoolAttr):
        return int(attr.value)
    return None


def _power_of_two_at_most(limit: int, name: str) -> Callable[[A.Attribute, str], str | None]:
    def check(attr: A.Attribute, arch: str) -> str | None:
        value = _int_value(attr)
        if value is None:
            return f"integer value expected for {arch}.{name}"
        if name == NUM_CTA_IN_CGA and arch.startswith(_SINGLE_CTA_ARCHS) and value != 1:
            return f"expected 1 for {arch}.{name}"
        if value <= 0 or value > limit or value & (value - 1):
            return f"expected power-of-two ≤ {limit} for {arch}.{name}"
        return None

    return check


def _in_range(low: int, high: int, name: str) -> Callable[[A.Attribute, str], str | None]:
    def check(attr: A.Attribute, arch: str) -> str | None:
        value = _int_value(attr)
        if value is None:
            return f"integer value expected for {arch}.{name}"
        if not low <= value <= high:
            return f"integer value in the range [{low}, {high}] is expected for {arch}.{name}"
        return None

    return check


def _boolean(attr: A.Attribute, arch: str) -> str | None:
    is_bool = isinstance(attr, A.BoolAttr) or (isinstance(attr, A.IntegerAttr) and attr.type == T.IntegerType(1))
    return None if is_bool else f"boolean value expected for {arch}.{ALLOW_TMA}"


# Each hint's rule: (the value, the architecture key) -> the complaint, or None.
HINT_RULES: dict[str, Callable[[A.Attribute, str], str | None]] = {
    NUM_CTA_IN_CGA: _power_of_two_at_most(16, NUM_CTA_IN_CGA),
    NUM_WORKER_WARPS: _power_of_two_at_most(32, NUM_WORKER_WARPS),
    ALLOW_TMA: _boolean,
    LATENCY: _in_range(1, 10, LATENCY),
    OCCUPANCY: _in_range(1, 32, OCCUPANCY),
}


def _header_span(v: Verifier, op: Operation, pattern: str, after: int | None = None) -> Span | None:
    """Where `pattern` (a regex) first occurs in the op's first line, from `after` on, or
    None. MLIR reports hint problems at the op's location, so a range is only narrowed
    to the text at fault where that stays on the line MLIR points at."""
    source = v.source
    if source is None or op.span is None:
        return None
    text = source.text
    start = op.span.start
    line_end = text.find("\n", start)
    if line_end < 0:
        line_end = len(text)
    m = re.compile(pattern).search(text, after if after is not None else start, line_end)
    return Span(m.start(), m.end()) if m else None


def _key_pattern(key: str) -> str:
    return r"(?<![\w$.])(?:" + re.escape(key) + '|"' + re.escape(key) + r'")(?=\s*=)'


def verify_hints(v: Verifier, op: Operation) -> None:
    """Check the op's `optimization_hints` as the options ask; see the module's doc."""
    mode = v.options.unsupported_hints
    if mode not in ("warn", "error"):
        return
    hints = op.properties.get("optimization_hints")
    if not isinstance(hints, A.OptimizationHintsAttr) or not hints.entries:
        return
    allowed = HINTS_FOR_OP.get(op.name, ())
    attr_span = _header_span(v, op, r"optimization_hints")
    search_from = attr_span.end if attr_span is not None else None
    for arch, params in hints.entries:
        if not isinstance(params, A.DictionaryAttr):
            v.fail(
                op,
                f"expected dictionary attribute for optimization_hints entry `{arch}` got value={params}",
                code="hint-entry",
            )
        arch_span = _header_span(v, op, _key_pattern(arch), search_from)
        if arch_span is not None:
            search_from = arch_span.end
        if _check_entry(v, op, arch, params, allowed, arch_span) and mode == "error":
            v.fail(op, VERIFICATION_FAILED, code="unsupported-hint")


def _check_entry(
    v: Verifier,
    op: Operation,
    arch: str,
    params: A.DictionaryAttr,
    allowed: tuple[str, ...],
    arch_span: Span | None,
) -> bool:
    """Warn about each problem of one architecture's hints; whether there was any."""
    if arch not in KNOWN_ARCHS and arch != DEFAULT_KEY:
        v.emit(
            op,
            f"unknown hint key {arch}",
            severity=Severity.WARNING,
            at=arch_span,
            code="unknown-hint-key",
            prefix=False,
        )
        return True
    bad = False
    search_from = arch_span.end if arch_span is not None else None
    for key, value in params.entries:
        span = _header_span(v, op, _key_pattern(key), search_from)
        if span is not None:
            search_from = span.end
        rule = HINT_RULES.get(key)
        if allowed and key not in allowed:
            message, code = f"{key} is not known hint for current Operation", "unsupported-hint"
        elif rule is None:
            message, code = f"unknown param {key} for {arch}", "unsupported-hint"
        else:
            complaint = rule(value, arch)
            if complaint is None:
                continue
            message, code = complaint, "hint-value"
        v.emit(op, message, severity=Severity.WARNING, at=span, code=code, prefix=False)
        bad = True
    return bad


# MLIR checks the hints of the pointer load/store ops before their memory-model rules,
# those of entry and the view load/store ops after their other rules: register this
# before, respectively after, the modules that hold those rules.
op_verifier("load_ptr_tko", "store_ptr_tko")(verify_hints)
for _module in ("structure", "ops_control", "ops_memory"):
    try:
        importlib.import_module(f"{__package__}.{_module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.{_module}":
            raise
op_verifier("entry", "load_view_tko", "store_view_tko")(verify_hints)
