"""The verifier: would NVIDIA's tools accept this module, and if not, why.

    from compiler.verify import check_text, verify, VerifyOptions
    result, diagnostics = check_text(text, "kernel.tileir")     # parse, then verify
    diagnostics = verify(module, VerifyOptions(target_version="13.1"))

`engine` walks the module in MLIR's order and runs the checks the op table drives;
the op-specific rules live in the `ops_*` modules, registered through `registry`;
`expected` implements `-verify-diagnostics`.
"""

from __future__ import annotations

from ..ir.diagnostics import Diagnostic, Severity, has_errors

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from ..text.parser import ParseResult
    from .engine import OpFailed, Verifier, VerifyOptions, verify

# The engine (and the op rules it registers) is imported on first use: the parser needs
# only `compiler.verify.types`, and `tileir fmt` never verifies.
_ENGINE_NAMES = frozenset({"OpFailed", "Verifier", "VerifyOptions", "verify"})


def __getattr__(name: str):
    if name in _ENGINE_NAMES:
        from . import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_text(
    text: str,
    name: str = "<input>",
    options: VerifyOptions | None = None,
    allow_unregistered: bool = False,
) -> tuple[ParseResult, list[Diagnostic]]:
    """Parse `text` and, when it parsed without errors, verify it.

    With `options.keep_going` off (MLIR's behaviour), only the diagnostics up to the first
    parse error are kept, since MLIR's parser stops there; our parser goes on, which the
    language server wants but `cuda-tile-opt` parity does not.
    """
    from ..text import ParseOptions, parse
    from .engine import VerifyOptions, verify

    options = options or VerifyOptions()
    result = parse(text, name, ParseOptions(allow_unregistered=allow_unregistered))
    diagnostics = list(result.diagnostics)
    if has_errors(diagnostics):
        if not options.keep_going:
            first = next(i for i, d in enumerate(diagnostics) if d.severity == Severity.ERROR)
            # A failing parse step may report several errors at one place before MLIR's
            # parser gives up (`expected valid keyword`, then the directive's own message).
            end = first + 1
            while end < len(diagnostics) and diagnostics[end].span.start == diagnostics[first].span.start:
                end += 1
            diagnostics = diagnostics[:end]
        return result, diagnostics
    return result, diagnostics + verify(result.module, options)


def check_text_in_parts(
    text: str,
    name: str = "<input>",
    options: VerifyOptions | None = None,
    allow_unregistered: bool = False,
    parts: int | None = None,
) -> bool | None:
    """True when `check_text` would give no diagnostic at all, found in several processes
    (`compiler.text.parts`) for a big module; None when there is something to report or the
    text is not one to split (only the one-process `check_text` then says what)."""
    from ..text import ParseOptions
    from ..text.parts import in_kernel_parts
    from .engine import VerifyOptions, _load_verifiers, verify

    options = options or VerifyOptions()
    _load_verifiers()  # here, once, not in each process after the fork
    results = in_kernel_parts(
        text,
        name,
        ParseOptions(allow_unregistered=allow_unregistered),
        lambda module: not verify(module, options),
        parts,
    )
    return True if results is not None and all(results) else None


__all__ = ["OpFailed", "Verifier", "VerifyOptions", "check_text", "check_text_in_parts", "verify"]
