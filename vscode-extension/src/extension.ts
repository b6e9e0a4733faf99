// The Tile IR extension: starts the tile_lsp language server and adds the commands and editors
// that go beyond plain LSP (view layouts, PTX and SASS, bytecode).
import * as path from 'path';
import * as vscode from 'vscode';
import {
  BYTECODE_VIEW_TYPE,
  BytecodeEditorProvider,
  BytecodeTextProvider,
  openBytecodeAsText,
} from './bytecodeEditor';
import { COMPILED_SCHEME, CompiledDocuments } from './compiledDocuments';
import { LayoutPanel } from './layoutPanel';
import { convertToBytecodeRequest, ptxRequest, sassRequest, tritonRequest } from './protocol';
import { BYTECODE_TEXT_SCHEME, CONFIGURATION_SECTION, errorMessage, LANGUAGE_ID, TileServer } from './server';

let server: TileServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const tileServer = new TileServer();
  server = tileServer;
  const compiled = new CompiledDocuments();
  context.subscriptions.push(
    tileServer,
    compiled,
    vscode.workspace.registerTextDocumentContentProvider(COMPILED_SCHEME, compiled),
    vscode.commands.registerCommand('tileir.showLayout', () =>
      LayoutPanel.show(context.extensionUri, tileServer, vscode.window.activeTextEditor),
    ),
    vscode.commands.registerCommand('tileir.showTriton', () => showTriton(tileServer, compiled)),
    vscode.commands.registerCommand('tileir.showPtx', () => showPtx(tileServer, compiled)),
    vscode.commands.registerCommand('tileir.showSass', () => showSass(tileServer, compiled, 'triton')),
    vscode.commands.registerCommand('tileir.showTileirasSass', () => showSass(tileServer, compiled, 'tileiras')),
    vscode.commands.registerCommand('tileir.saveAsBytecode', () => saveAsBytecode(tileServer)),
    vscode.commands.registerCommand('tileir.restartServer', () => restart(tileServer)),
    vscode.commands.registerCommand('tileir.openBytecodeAsText', (uri?: vscode.Uri) => openBytecodeAsText(uri)),
    vscode.window.registerCustomEditorProvider(BYTECODE_VIEW_TYPE, new BytecodeEditorProvider(tileServer), {
      supportsMultipleEditorsPerDocument: true,
    }),
    vscode.workspace.registerTextDocumentContentProvider(BYTECODE_TEXT_SCHEME, new BytecodeTextProvider(tileServer)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      // The interpreter and the command line only take effect in a new process; the other
      // settings reach the running server through didChangeConfiguration.
      if (event.affectsConfiguration(`${CONFIGURATION_SECTION}.server`)) {
        void restart(tileServer);
      } else if (event.affectsConfiguration(CONFIGURATION_SECTION)) {
        tileServer.settingsChanged();
      }
    }),
    { dispose: () => LayoutPanel.disposeCurrent() },
  );
  // A start failure has been shown to the user already; the commands retry it.
  await tileServer.ready().catch(() => undefined);
}

export function deactivate(): void {
  server?.dispose();
  server = undefined;
}

async function restart(tileServer: TileServer): Promise<void> {
  try {
    await tileServer.restart();
    void vscode.window.setStatusBarMessage('Tile IR language server restarted', 3000);
  } catch {
    // TileServer.start has shown the error.
  }
}

function activeTileEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== LANGUAGE_ID) {
    void vscode.window.showWarningMessage('Tile IR: open a .tileir file first.');
    return undefined;
  }
  return editor;
}

/** The names of the entries (kernels) of a document, from the server's document symbols. */
async function kernelSymbols(uri: vscode.Uri): Promise<vscode.DocumentSymbol[]> {
  const symbols = await vscode.commands.executeCommand<vscode.DocumentSymbol[] | undefined>(
    'vscode.executeDocumentSymbolProvider',
    uri,
  );
  const kernels: vscode.DocumentSymbol[] = [];
  const visit = (list: readonly vscode.DocumentSymbol[]): void => {
    for (const symbol of list) {
      if (symbol.kind === vscode.SymbolKind.Function || symbol.kind === vscode.SymbolKind.Method) {
        kernels.push(symbol);
      }
      if (symbol.children) {
        visit(symbol.children);
      }
    }
  };
  // Only hierarchical symbols have ranges to match against the cursor.
  if (symbols && symbols.length > 0 && 'children' in symbols[0]) {
    visit(symbols);
  }
  return kernels;
}

/** The kernel under the cursor, else the only one, else one the user picks; undefined: all/unknown. */
async function chooseKernel(editor: vscode.TextEditor): Promise<string | undefined | null> {
  let kernels: vscode.DocumentSymbol[];
  try {
    kernels = await kernelSymbols(editor.document.uri);
  } catch {
    return undefined;
  }
  const name = (symbol: vscode.DocumentSymbol): string => symbol.name.replace(/^@/, '');
  const underCursor = kernels.find((symbol) => symbol.range.contains(editor.selection.active));
  if (underCursor) {
    return name(underCursor);
  }
  if (kernels.length <= 1) {
    return kernels.length === 1 ? name(kernels[0]) : undefined;
  }
  const picked = await vscode.window.showQuickPick(
    kernels.map((symbol) => ({ label: name(symbol), description: symbol.detail })),
    { placeHolder: 'Which kernel?' },
  );
  return picked ? picked.label : null; // null: the user cancelled
}

async function showTriton(tileServer: TileServer, compiled: CompiledDocuments): Promise<void> {
  await showCompiled(compiled, 'Triton source', async (editor, kernel, arch) => {
    const result = await tileServer.requestWithProgress(
      tritonRequest,
      { textDocument: { uri: editor.document.uri.toString() }, kernel, arch },
      kernel ? `Lowering ${kernel} to Triton` : 'Lowering to Triton',
    );
    // What Triton's interpreter cannot run is worth knowing before `tileir run --backend triton-interpret`.
    const blocked = result.notInterpretable ?? [];
    const info = blocked.length
      ? [`Triton's interpreter cannot run ${blocked.join(', ')} (inline PTX or libdevice); the GPU runs this source`]
      : [];
    return { ...made(result), content: result.source, language: 'python', extension: 'py', notes: result.notes, info };
  });
}

async function showPtx(tileServer: TileServer, compiled: CompiledDocuments): Promise<void> {
  await showCompiled(compiled, 'PTX', async (editor, kernel, arch) => {
    const result = await tileServer.requestWithProgress(
      ptxRequest,
      { textDocument: { uri: editor.document.uri.toString() }, kernel, arch },
      kernel ? `Generating PTX for ${kernel}` : 'Generating PTX',
    );
    return { ...made(result), content: result.ptx, language: 'ptx', extension: 'ptx', notes: result.notes };
  });
}

async function showSass(
  tileServer: TileServer,
  compiled: CompiledDocuments,
  compiler: 'triton' | 'tileiras',
): Promise<void> {
  const by = compiler === 'tileiras' ? " by NVIDIA's tileiras" : '';
  await showCompiled(compiled, 'SASS', async (editor, kernel, arch) => {
    const result = await tileServer.requestWithProgress(
      sassRequest,
      { textDocument: { uri: editor.document.uri.toString() }, kernel, arch, compiler },
      kernel ? `Generating SASS for ${kernel}${by}` : `Generating SASS${by}`,
    );
    const extension = compiler === 'tileiras' ? 'tileiras.sass' : 'sass';
    return { ...made(result), content: result.sass, language: 'nvidia-sass', extension, notes: result.notes };
  });
}

/** What a Show command opens: the text, its language and file extension, for the kernel and
 * target the server made it for, with warnings (`notes`) and information to show. */
interface Shown {
  kernel: string;
  arch: string;
  content: string;
  language: string;
  extension: string;
  notes?: string[];
  info?: string[];
}

function made(result: { kernel: string; arch: string }): { kernel: string; arch: string } {
  return { kernel: result.kernel, arch: result.arch };
}

/** Shows beside the editor, read-only, what `make` compiles of the kernel under the cursor (or
 * the one the user picks) for the `tileir.targetArchitecture` setting; a failure is an error
 * message, and the compile's notes (a hint it could not apply) warning messages. */
async function showCompiled(
  compiled: CompiledDocuments,
  what: string,
  make: (
    editor: vscode.TextEditor,
    kernel: string | undefined,
    arch: string | undefined,
  ) => Promise<Shown>,
): Promise<void> {
  const editor = activeTileEditor();
  if (!editor) {
    return;
  }
  const kernel = await chooseKernel(editor);
  if (kernel === null) {
    return;
  }
  const arch = vscode.workspace.getConfiguration(CONFIGURATION_SECTION).get<string>('targetArchitecture');
  try {
    const shown = await make(editor, kernel, arch);
    const { content, language, extension } = shown;
    await compiled.show(editor.document.uri, shown.kernel, shown.arch, extension, content, language);
    for (const note of shown.notes ?? []) {
      void vscode.window.showWarningMessage(`Tile IR: ${note}`);
    }
    for (const line of shown.info ?? []) {
      void vscode.window.showInformationMessage(`Tile IR: ${line}`);
    }
  } catch (error) {
    void vscode.window.showErrorMessage(`Tile IR: no ${what}: ${errorMessage(error)}`);
  }
}

async function saveAsBytecode(tileServer: TileServer): Promise<void> {
  const editor = activeTileEditor();
  if (!editor) {
    return;
  }
  const source = editor.document.uri;
  const defaultName = `${path.basename(source.path, path.extname(source.path))}.tileirbc`;
  const defaultUri =
    source.scheme === 'file'
      ? vscode.Uri.joinPath(source, '..', defaultName)
      : vscode.workspace.workspaceFolders?.[0]
        ? vscode.Uri.joinPath(vscode.workspace.workspaceFolders[0].uri, defaultName)
        : undefined;
  const target = await vscode.window.showSaveDialog({
    defaultUri,
    filters: { 'Tile IR bytecode': ['tileirbc'] },
    saveLabel: 'Save Bytecode',
  });
  if (!target) {
    return;
  }
  const version = vscode.workspace.getConfiguration(CONFIGURATION_SECTION).get<string>('bytecodeVersion');
  let bytes: Uint8Array;
  try {
    const result = await tileServer.requestWithProgress(
      convertToBytecodeRequest,
      { uri: source.toString(), version },
      `Writing bytecode ${version ?? ''}`.trim(),
    );
    bytes = Buffer.from(result.output, 'base64');
  } catch (error) {
    void vscode.window.showErrorMessage(`Tile IR: could not write bytecode: ${errorMessage(error)}`);
    return;
  }
  try {
    // Write beside the target and rename over it, so the file is never half written.
    const temporary = target.with({ path: `${target.path}.${process.pid}.tmp` });
    await vscode.workspace.fs.writeFile(temporary, bytes);
    await vscode.workspace.fs.rename(temporary, target, { overwrite: true });
  } catch (error) {
    void vscode.window.showErrorMessage(`Tile IR: could not write ${target.fsPath}: ${errorMessage(error)}`);
    return;
  }
  void vscode.window.setStatusBarMessage(`Tile IR: wrote ${bytes.length} bytes to ${path.basename(target.path)}`, 5000);
}
