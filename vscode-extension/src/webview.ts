// Shared pieces of the extension's webviews: a nonce and a strict Content-Security-Policy.
import { randomBytes } from 'crypto';
import * as vscode from 'vscode';

export function makeNonce(): string {
  return randomBytes(18).toString('base64');
}

/**
 * No remote resources at all: images only as data: URIs (the server's SVG), styles and the one
 * script only with the page's nonce.
 */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    'img-src data:',
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The webview options of a page that runs one script from media/ and loads nothing else. */
export function scriptOnlyOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media')],
  };
}
