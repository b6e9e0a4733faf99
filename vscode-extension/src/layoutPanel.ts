// A webview beside the editor that shows the picture of the view under the cursor
// (`tileir/layout`): it follows the cursor, and offers inputs for the extents of dynamic tensor
// dimensions and for a tile index, re-requesting the picture with them.
import * as vscode from 'vscode';
import { layoutRequest, LayoutParams, LayoutResult } from './protocol';
import { errorMessage, LANGUAGE_ID, TileServer } from './server';
import { contentSecurityPolicy, makeNonce, scriptOnlyOptions } from './webview';

/** Messages from the webview (media/layout.js). */
type FromWebview =
  | { type: 'ready' }
  | { type: 'apply'; extents: Record<string, unknown>; index: unknown }
  | { type: 'follow'; value: boolean };

/** Messages to the webview. */
type ToWebview =
  | {
      type: 'layout';
      title: string;
      location: string;
      /** The server's SVG, inlined by the webview (sanitised there) so that tiles can be hovered. */
      svg: string;
      text: string;
      data: string;
      /** The layout data (the tiles' element ranges, steps, ...) for the hover read-out. */
      layout: object;
      dynamicDims: string[];
      extents: Record<string, number>;
      index: number[] | null;
      follow: boolean;
    }
  | { type: 'empty'; message: string; follow: boolean };

/** Milliseconds of cursor rest before a new picture is requested. */
const FOLLOW_DELAY_MS = 250;

interface Target {
  uri: vscode.Uri;
  position: vscode.Position;
}

export class LayoutPanel implements vscode.Disposable {
  private static current: LayoutPanel | undefined;
  static readonly viewType = 'tileir.layout';

  private readonly disposables: vscode.Disposable[] = [];
  private target: Target | undefined;
  /** Extents the user typed, by dimension name; kept across views so they need not be retyped. */
  private readonly extents: Record<string, number> = {};
  private index: number[] | undefined;
  private follow = true;
  private timer: NodeJS.Timeout | undefined;
  /** Counts requests so that an answer overtaken by a newer request is dropped. */
  private generation = 0;
  private cancellation: vscode.CancellationTokenSource | undefined;

  static show(extensionUri: vscode.Uri, server: TileServer, editor: vscode.TextEditor | undefined): void {
    if (!LayoutPanel.current) {
      const panel = vscode.window.createWebviewPanel(
        LayoutPanel.viewType,
        'Tile IR Layout',
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        scriptOnlyOptions(extensionUri),
      );
      LayoutPanel.current = new LayoutPanel(panel, extensionUri, server);
    } else {
      LayoutPanel.current.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    if (editor && editor.document.languageId === LANGUAGE_ID) {
      LayoutPanel.current.target = { uri: editor.document.uri, position: editor.selection.active };
    }
    void LayoutPanel.current.refresh();
  }

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    private readonly server: TileServer,
  ) {
    panel.webview.html = this.html(panel.webview, extensionUri);
    this.disposables.push(
      panel.onDidDispose(() => this.dispose()),
      panel.webview.onDidReceiveMessage((message: FromWebview) => this.onMessage(message)),
      panel.onDidChangeViewState(() => {
        if (panel.visible) {
          void this.refresh();
        }
      }),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        if (this.follow && event.textEditor.document.languageId === LANGUAGE_ID) {
          this.target = { uri: event.textEditor.document.uri, position: event.selections[0].active };
          this.schedule();
        }
      }),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (this.target && event.document.uri.toString() === this.target.uri.toString()) {
          this.schedule();
        }
      }),
    );
  }

  private schedule(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, FOLLOW_DELAY_MS);
  }

  private onMessage(message: FromWebview): void {
    switch (message.type) {
      case 'ready':
        void this.refresh();
        break;
      case 'apply':
        for (const [name, value] of Object.entries(message.extents)) {
          const extent = Number(value);
          if (value === '' || value === null || !Number.isInteger(extent) || extent < 0) {
            delete this.extents[name];
          } else {
            this.extents[name] = extent;
          }
        }
        this.index = parseIndex(message.index);
        void this.refresh();
        break;
      case 'follow':
        this.follow = Boolean(message.value);
        if (this.follow) {
          const editor = vscode.window.activeTextEditor;
          if (editor && editor.document.languageId === LANGUAGE_ID) {
            this.target = { uri: editor.document.uri, position: editor.selection.active };
          }
          void this.refresh();
        }
        break;
    }
  }

  private post(message: ToWebview): void {
    void this.panel.webview.postMessage(message);
  }

  private async refresh(): Promise<void> {
    if (!this.panel.visible) {
      return;
    }
    const target = this.target;
    if (!target) {
      this.post({ type: 'empty', message: 'Put the cursor on a view type or a view op in a .tileir file.', follow: this.follow });
      return;
    }
    this.cancellation?.cancel();
    const cancellation = new vscode.CancellationTokenSource();
    this.cancellation = cancellation;
    const generation = ++this.generation;
    const params: LayoutParams = {
      textDocument: { uri: target.uri.toString() },
      position: { line: target.position.line, character: target.position.character },
    };
    if (Object.keys(this.extents).length > 0) {
      params.extents = { ...this.extents };
    }
    if (this.index) {
      params.index = this.index;
    }
    let result: LayoutResult | null;
    try {
      const client = await this.server.ready();
      result = await client.sendRequest(layoutRequest, params, cancellation.token);
    } catch (error) {
      if (generation === this.generation && !cancellation.token.isCancellationRequested) {
        this.post({ type: 'empty', message: `The server could not draw the layout: ${errorMessage(error)}`, follow: this.follow });
      }
      return;
    } finally {
      cancellation.dispose();
      if (this.cancellation === cancellation) {
        this.cancellation = undefined;
      }
    }
    if (generation !== this.generation) {
      return;
    }
    const location = `${vscode.workspace.asRelativePath(target.uri)}:${target.position.line + 1}:${target.position.character + 1}`;
    if (!result) {
      this.post({ type: 'empty', message: `No view under the cursor (${location}).`, follow: this.follow });
      return;
    }
    this.panel.title = `Layout: ${result.title}`;
    this.post({
      type: 'layout',
      title: result.title,
      location,
      svg: result.svg,
      text: result.text,
      data: JSON.stringify(result.data, null, 2),
      layout: result.data,
      dynamicDims: dynamicDims(result),
      extents: { ...this.extents },
      index: this.index ?? null,
      follow: this.follow,
    });
  }

  private html(webview: vscode.Webview, extensionUri: vscode.Uri): string {
    const nonce = makeNonce();
    const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'layout.js'));
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Tile IR Layout</title>
<style nonce="${nonce}">
  body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 12px; }
  header { display: flex; align-items: baseline; gap: 12px; flex-wrap: wrap; }
  h1 { font-size: 1.1em; margin: 10px 0 4px; }
  .location { color: var(--vscode-descriptionForeground); }
  form { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; margin: 8px 0; }
  label { display: inline-flex; gap: 4px; align-items: center; }
  input[type=number], input[type=text] { width: 7em; color: var(--vscode-input-foreground);
    background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, transparent); padding: 2px 4px; }
  button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 3px 10px; cursor: pointer; }
  button:hover { background: var(--vscode-button-hoverBackground); }
  .picture { background: #ffffff; padding: 8px; border-radius: 4px; overflow: auto; }
  .picture svg { max-width: 100%; height: auto; display: block; }
  .picture svg rect.tile:hover { stroke: #d0021b; stroke-width: 2; }
  .picture svg text { pointer-events: none; }
  .hover { font-family: var(--vscode-editor-font-family); min-height: 1.4em; margin: 4px 0; }
  pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); white-space: pre; overflow: auto; }
  .message { color: var(--vscode-descriptionForeground); margin-top: 16px; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<header>
  <h1 id="title">Tile IR Layout</h1>
  <span class="location" id="location"></span>
  <label><input type="checkbox" id="follow" checked> Follow cursor</label>
</header>
<form id="controls" hidden>
  <span id="dims"></span>
  <label>Tile index <input type="text" id="index" placeholder="e.g. 0, 1" title="A tile index of the index space, comma separated; its elements are highlighted"></label>
  <button type="submit">Apply</button>
</form>
<p class="message" id="message">Waiting for the language server…</p>
<div class="hover" id="hover" aria-live="polite" hidden>Hover over a tile for its index and elements.</div>
<div class="picture" id="picture" hidden></div>
<details id="textDetails" hidden><summary>Text</summary><pre id="text"></pre></details>
<details id="dataDetails" hidden><summary>Data</summary><pre id="data"></pre></details>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }

  private disposed = false;

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    LayoutPanel.current = undefined;
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.cancellation?.cancel();
    this.panel.dispose();
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }

  static disposeCurrent(): void {
    LayoutPanel.current?.dispose();
  }
}

/**
 * Every dynamic dimension of the view, also those the user gave an extent: the server lists only
 * the still unknown ones, and an input that vanished after Apply could not be changed again.
 */
function dynamicDims(result: LayoutResult): string[] {
  const all = (result.data as { dynamic_dims?: unknown }).dynamic_dims;
  if (Array.isArray(all) && all.every((d) => Number.isInteger(d))) {
    return all.map((d: number) => `S${d}`);
  }
  return result.dynamicDims;
}

/** "0, 1" or [0, 1] -> [0, 1]; anything else (empty, negative, not integers) -> no index. */
function parseIndex(value: unknown): number[] | undefined {
  const parts = Array.isArray(value)
    ? value
    : typeof value === 'string'
      ? value.split(/[\s,]+/).filter((part) => part.length > 0)
      : [];
  if (parts.length === 0) {
    return undefined;
  }
  const index = parts.map((part) => Number(part));
  return index.every((n) => Number.isInteger(n) && n >= 0) ? index : undefined;
}
