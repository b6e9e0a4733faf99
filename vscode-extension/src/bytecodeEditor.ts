// Opens `*.tileirbc` files: a read-only custom editor that shows the bytecode as Tile IR text
// (`tileir/convertFromBytecode`), and a virtual document scheme that opens the same text in a
// normal, highlighted text editor.
import * as path from 'path';
import * as vscode from 'vscode';
import { convertFromBytecodeRequest } from './protocol';
import { BYTECODE_TEXT_SCHEME, errorMessage, TileServer } from './server';
import { contentSecurityPolicy, escapeHtml, makeNonce } from './webview';

export const BYTECODE_VIEW_TYPE = 'tileir.bytecodeViewer';

async function disassemble(server: TileServer, fileUri: vscode.Uri): Promise<string> {
  const result = await server.requestWithProgress(
    convertFromBytecodeRequest,
    { uri: fileUri.toString() },
    `Reading ${path.basename(fileUri.fsPath)}`,
  );
  return result.output;
}

/** The virtual text document of a bytecode file; the `.tileir` suffix gives it the language. */
export function bytecodeTextUri(fileUri: vscode.Uri): vscode.Uri {
  return vscode.Uri.from({
    scheme: BYTECODE_TEXT_SCHEME,
    path: `${fileUri.path}.tileir`,
    query: fileUri.toString(),
  });
}

export class BytecodeTextProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly server: TileServer) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const fileUri = vscode.Uri.parse(uri.query, true);
    try {
      return await disassemble(this.server, fileUri);
    } catch (error) {
      return `// Could not read ${fileUri.fsPath} as Tile IR bytecode:\n// ${errorMessage(error)}\n`;
    }
  }
}

export async function openBytecodeAsText(fileUri: vscode.Uri | undefined): Promise<void> {
  let target = fileUri;
  if (!target) {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      filters: { 'Tile IR bytecode': ['tileirbc'] },
      openLabel: 'Open as Tile IR text',
    });
    target = picked?.[0];
  }
  if (!target) {
    return;
  }
  const document = await vscode.workspace.openTextDocument(bytecodeTextUri(target));
  await vscode.window.showTextDocument(document, { preview: false });
}

export class BytecodeEditorProvider implements vscode.CustomReadonlyEditorProvider {
  constructor(private readonly server: TileServer) {}

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
  }

  async resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): Promise<void> {
    panel.webview.options = { enableScripts: true };
    const nonce = makeNonce();
    const render = async (): Promise<void> => {
      panel.webview.html = page(nonce, document.uri, 'Reading bytecode…', true);
      try {
        const text = await disassemble(this.server, document.uri);
        panel.webview.html = page(nonce, document.uri, text, false);
      } catch (error) {
        panel.webview.html = page(
          nonce,
          document.uri,
          `Could not read this file as Tile IR bytecode:\n${errorMessage(error)}`,
          true,
        );
      }
    };
    // Show the new text when the file is rewritten, e.g. by "Save as Bytecode".
    const folder = vscode.Uri.joinPath(document.uri, '..');
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(folder, path.basename(document.uri.path)),
    );
    const subscriptions = [
      watcher,
      watcher.onDidChange(() => void render()),
      watcher.onDidCreate(() => void render()),
      panel.webview.onDidReceiveMessage((message: { type?: string }) => {
        if (message?.type === 'openAsText') {
          void openBytecodeAsText(document.uri);
        }
      }),
    ];
    panel.onDidDispose(() => subscriptions.forEach((subscription) => subscription.dispose()));
    await render();
  }
}

function page(nonce: string, uri: vscode.Uri, text: string, isMessage: boolean): string {
  const name = escapeHtml(path.basename(uri.fsPath));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(nonce)}">
<title>${name}</title>
<style nonce="${nonce}">
  body { color: var(--vscode-foreground); font-family: var(--vscode-font-family); padding: 0 12px; }
  header { display: flex; gap: 12px; align-items: center; margin: 8px 0; }
  .note { color: var(--vscode-descriptionForeground); }
  button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 3px 10px; cursor: pointer; }
  pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); white-space: pre; overflow: auto; }
  pre.message { color: var(--vscode-descriptionForeground); white-space: pre-wrap; }
</style>
</head>
<body>
<header>
  <span class="note">${name}: Tile IR bytecode, shown as text (read-only)</span>
  <button id="open" type="button">Open as Text Editor</button>
</header>
<pre class="${isMessage ? 'message' : 'text'}">${escapeHtml(text)}</pre>
<script nonce="${nonce}">
  const vscode = acquireVsCodeApi();
  document.getElementById('open').addEventListener('click', () => vscode.postMessage({ type: 'openAsText' }));
</script>
</body>
</html>`;
}
