// What Show PTX and Show SASS produce, as read-only documents of their own scheme: an untitled
// document would be a dirty one, which VS Code offers to save each time it is closed.
import * as path from 'path';
import * as vscode from 'vscode';

export const COMPILED_SCHEME = 'tileir-compiled';

export class CompiledDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly closing: vscode.Disposable;
  readonly onDidChange = this.changed.event;

  constructor() {
    // The text lives as long as a document shows it.
    this.closing = vscode.workspace.onDidCloseTextDocument((document) => {
      if (document.uri.scheme === COMPILED_SCHEME) {
        this.texts.delete(document.uri.toString());
      }
    });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  /** Opens `text` beside the editor, named after the source file, kernel, target and kind
   * (`vector_add.sm_100.ptx`); showing the same again replaces the text in place. */
  async show(
    source: vscode.Uri,
    kernel: string,
    arch: string,
    extension: string,
    text: string,
    language: string,
  ): Promise<void> {
    const stem = kernel || path.basename(source.path, path.extname(source.path));
    const name = [stem, arch, extension].filter(Boolean).join('.');
    // The source's path keeps two files' kernels of one name apart; the name is the tab's title.
    const uri = vscode.Uri.from({ scheme: COMPILED_SCHEME, path: `${source.path}/${name}` });
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
    let document = await vscode.workspace.openTextDocument(uri);
    const languages = await vscode.languages.getLanguages();
    if (languages.includes(language) && document.languageId !== language) {
      document = await vscode.languages.setTextDocumentLanguage(document, language);
    }
    await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  }

  dispose(): void {
    this.closing.dispose();
    this.changed.dispose();
    this.texts.clear();
  }
}
