"""Code actions: quick fixes from the diagnostics' fixes, and MLIR's "add expected-* checks".

- A quick fix (`quickfix`) for each `Fix` of each diagnostic in the request's context,
  preferred when it is the diagnostic's only fix.
- "Add expected-* check" (`quickfix`), one per diagnostic in the context, as mlir-lsp-server
  offers it: a `// expected-error@+1 {{...}}` line above the diagnostic (and a note check for
  each related location), to turn the diagnostic into a `-verify-diagnostics` test.
- "Add expected-* checks for the whole document" (`source.addExpectedChecks`): a check for
  every diagnostic that `tileir opt -verify-diagnostics` would call unexpected, so that it
  passes afterwards. It is a *source* action, not a quick fix: it edits the whole file rather
  than repairing the code at the cursor, which is what VS Code's "Source Action..." menu and
  `codeActionsOnSave` are for (and it keeps the lightbulb about real fixes). It re-verifies
  the text the way `tileir opt` does (each kernel stops at its first error, `// -----` chunks
  on their own), so its edit is made in `codeAction/resolve` when the client can resolve.

Clients without `codeActionLiteralSupport` only understand commands; these actions are edits,
so such clients get none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from compiler.ir.diagnostics import Diagnostic, TextEdit
from compiler.verify.annotate import Check, check_edits, checks_for, missing_checks

from ..server import feature

if TYPE_CHECKING:
    from ..documents import Analysis
    from ..server import TileLanguageServer

ADD_EXPECTED_CHECKS = "source.addExpectedChecks"
_RESOLVE_TAG = "tileir.addExpectedChecks"
_KINDS = [lsp.CodeActionKind.QuickFix, ADD_EXPECTED_CHECKS]


def register(server: TileLanguageServer) -> None:
    @feature(
        server,
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=_KINDS, resolve_provider=True),
        empty=[],
    )
    def code_action(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        capability = server.client_capabilities.text_document
        code_action_caps = capability.code_action if capability is not None else None
        if code_action_caps is None or code_action_caps.code_action_literal_support is None:
            return []
        uri = params.text_document.uri
        analysis = server.analysis(uri)
        if analysis is None:
            return []
        only = params.context.only
        actions: list[lsp.CodeAction] = []
        if _wanted(lsp.CodeActionKind.QuickFix, only):
            for client_diagnostic in params.context.diagnostics:
                core = _matching(analysis, client_diagnostic)
                if core is not None:
                    actions += _quick_fixes(server, analysis, core, client_diagnostic, code_action_caps)
        if _wanted(ADD_EXPECTED_CHECKS, only) and analysis.diagnostics:
            action = _document_checks_action(server, analysis, params.context, code_action_caps)
            if action is not None:
                actions.append(action)
        return actions

    @feature(server, lsp.CODE_ACTION_RESOLVE, empty=None)
    def resolve(action: lsp.CodeAction) -> lsp.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        if data.get("tag") != _RESOLVE_TAG or action.edit is not None:
            return action
        analysis = server.analysis(str(data.get("uri", "")))
        if analysis is not None:
            action.edit = _workspace_edit(server, analysis, _document_check_edits(analysis))
        return action


def _wanted(kind: str, only: list[str] | None) -> bool:
    """Whether `kind` passes the client's `only` filter (a kind matches its parents)."""
    if not only:
        return True
    return any(kind == want or kind.startswith(f"{want}.") for want in only)


def _matching(analysis: Analysis, client_diagnostic: lsp.Diagnostic) -> Diagnostic | None:
    """The current diagnostic the client's one stands for (same range and message): a stale one
    (published before the latest edit) has none, and gets no action."""
    for core in analysis.diagnostics:
        if core.message == client_diagnostic.message and analysis.positions.range(core.span) == client_diagnostic.range:
            return core
    return None


def _quick_fixes(
    server: TileLanguageServer,
    analysis: Analysis,
    core: Diagnostic,
    client_diagnostic: lsp.Diagnostic,
    caps: lsp.CodeActionClientCapabilities,
) -> list[lsp.CodeAction]:
    actions: list[lsp.CodeAction] = []
    preferred = len(core.fixes) == 1 and bool(caps.is_preferred_support)
    for fix in core.fixes:
        actions.append(
            lsp.CodeAction(
                title=fix.title,
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[client_diagnostic],
                is_preferred=True if preferred else None,
                edit=_workspace_edit(server, analysis, list(fix.edits)),
            )
        )
    checks = checks_for([core], analysis.source)
    if checks:
        title = f"Add expected-{core.severity.label} check"
        actions.append(
            lsp.CodeAction(
                title=title,
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[client_diagnostic],
                edit=_workspace_edit(server, analysis, check_edits(analysis.text, checks)),
            )
        )
    return actions


def _document_checks_action(
    server: TileLanguageServer,
    analysis: Analysis,
    context: lsp.CodeActionContext,
    caps: lsp.CodeActionClientCapabilities,
) -> lsp.CodeAction | None:
    title = "Add expected-* checks for every diagnostic (tileir opt -verify-diagnostics)"
    kind = ADD_EXPECTED_CHECKS
    resolvable = caps.resolve_support is not None and "edit" in (caps.resolve_support.properties or [])
    if resolvable and caps.data_support:
        data = {"tag": _RESOLVE_TAG, "uri": analysis.uri}
        return lsp.CodeAction(title=title, kind=kind, data=data)
    if context.trigger_kind == lsp.CodeActionTriggerKind.Automatic and not context.only:
        # Re-verifying on every cursor move is not worth it for an action the user asks for.
        return None
    edits = _document_check_edits(analysis)
    if not edits:
        return None
    return lsp.CodeAction(title=title, kind=kind, edit=_workspace_edit(server, analysis, edits))


def _document_check_edits(analysis: Analysis) -> list[TextEdit]:
    checks: list[Check] = missing_checks(analysis.text, analysis.source.name, analysis.settings.verify_options())
    return check_edits(analysis.text, checks)


def _workspace_edit(server: TileLanguageServer, analysis: Analysis, edits: list[TextEdit]) -> lsp.WorkspaceEdit:
    text_edits: list[Any] = [
        lsp.TextEdit(range=analysis.positions.range(edit.span), new_text=edit.new_text) for edit in edits
    ]
    workspace = server.client_capabilities.workspace
    edit_caps = workspace.workspace_edit if workspace is not None else None
    if edit_caps is not None and edit_caps.document_changes:
        # A versioned edit: the client refuses it if the document changed since.
        document = lsp.OptionalVersionedTextDocumentIdentifier(uri=analysis.uri, version=analysis.version)
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=document, edits=text_edits)])
    return lsp.WorkspaceEdit(changes={analysis.uri: text_edits})
