// Starts, restarts and talks to the language server (`<python> -m tile_lsp` over stdio).
import { randomUUID } from 'crypto';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  RequestType,
  ServerOptions,
  TransportKind,
  WorkDoneProgress,
} from 'vscode-languageclient/node';
import { WorkDoneParams } from './protocol';

export const LANGUAGE_ID = 'tileir';
export const CONFIGURATION_SECTION = 'tileir';
/** Virtual documents `tileir-bytecode:/path/k.tileirbc.tileir?<file uri>`: a bytecode file as text. */
export const BYTECODE_TEXT_SCHEME = 'tileir-bytecode';

/** The message of an error from a request, a start failure or anything else thrown. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  return String(error);
}

export class TileServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  /** Why the last start failed; no new start is tried (and no new error shown) until restart(). */
  private startFailure: Error | undefined;
  /** The restart waiting for its turn, if any, and the last one asked for (see restart()). */
  private queuedRestart: Promise<void> | undefined;
  private lastRestart: Promise<void> = Promise.resolve();
  private readonly outputChannel = vscode.window.createOutputChannel('Tile IR Language Server');
  private readonly traceChannel = vscode.window.createOutputChannel('Tile IR Language Server Trace');

  /** The running client, starting the server first if it is not running. */
  async ready(): Promise<LanguageClient> {
    if (this.client?.isRunning()) {
      return this.client;
    }
    if (this.startFailure) {
      throw this.startFailure;
    }
    if (!this.starting) {
      this.starting = this.start().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  /** The client if the server is up now; used where waiting for a start is not worth it. */
  get runningClient(): LanguageClient | undefined {
    return this.client?.isRunning() ? this.client : undefined;
  }

  private async start(): Promise<LanguageClient> {
    if (this.client) {
      // A client that failed or stopped is replaced, so that new settings take effect.
      const old = this.client;
      this.client = undefined;
      await old.dispose().catch(() => undefined);
    }
    const config = vscode.workspace.getConfiguration(CONFIGURATION_SECTION);
    const python = config.get<string>('server.python', 'python3') || 'python3';
    const extraArgs = config.get<string[]>('server.args', []);
    const serverOptions: ServerOptions = {
      command: python,
      args: ['-m', 'tile_lsp', ...extraArgs],
      transport: TransportKind.stdio,
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: LANGUAGE_ID },
        { scheme: 'untitled', language: LANGUAGE_ID },
        // A bytecode file opened as text: the server must see it to hover it, check it and
        // write it back as bytecode (Save as Bytecode), which it does from the open document.
        { scheme: BYTECODE_TEXT_SCHEME, language: LANGUAGE_ID },
      ],
      // workspace/didChangeConfiguration is sent by settingsChanged(), on the extension's own
      // onDidChangeConfiguration; the server then reads the values through workspace/configuration.
      outputChannel: this.outputChannel,
      traceOutputChannel: this.traceChannel,
    };
    const client = new LanguageClient(LANGUAGE_ID, 'Tile IR Language Server', serverOptions, clientOptions);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.startFailure = new Error(
        `the Tile IR language server is not running (${errorMessage(error)}); run "Tile IR: Restart Language Server"`,
      );
      // Not awaited: the notification stays until the user closes it, the caller should not.
      void vscode.window
        .showErrorMessage(
          `Tile IR: could not start the language server with "${python} -m tile_lsp" ` +
            `(${errorMessage(error)}). Set "${CONFIGURATION_SECTION}.server.python" to a Python ` +
            'that has tileir-tools installed (in a remote window: in the Remote settings).',
          'Open Settings',
          'Show Log',
        )
        .then((choice) => {
          if (choice === 'Open Settings') {
            void vscode.commands.executeCommand('workbench.action.openSettings', 'tileir.server');
          } else if (choice === 'Show Log') {
            this.outputChannel.show(true);
          }
        });
      throw error;
    }
    return client;
  }

  /**
   * Stops the server and starts a new one with the current settings. Restarts run one after
   * another, never over a start in progress (disposing a client that is still starting left
   * its start unsettled, so the failure of a bad interpreter was never shown); one asked for
   * while another waits joins it.
   */
  restart(): Promise<void> {
    if (!this.queuedRestart) {
      const queued = this.lastRestart
        .catch(() => undefined)
        .then(() => {
          this.queuedRestart = undefined;
          return this.restartNow();
        });
      this.queuedRestart = queued;
      this.lastRestart = queued;
    }
    return this.queuedRestart;
  }

  private async restartNow(): Promise<void> {
    await this.starting?.catch(() => undefined);
    this.startFailure = undefined;
    const old = this.client;
    this.client = undefined;
    if (old) {
      await old.dispose().catch(() => undefined);
    }
    await this.ready();
  }

  /**
   * Tells the server that `tileir.*` settings changed (it reads them back through
   * workspace/configuration). Sent here rather than by the client's own synchronisation, which
   * would also send it to a client being stopped for a restart, and show that as an error.
   */
  settingsChanged(): void {
    const client = this.runningClient;
    if (client && !this.queuedRestart) {
      client.sendNotification(DidChangeConfigurationNotification.type, { settings: null }).catch(() => undefined);
    }
  }

  /**
   * Sends a request with a work-done token and shows the server's `$/progress` reports for it in
   * a cancellable notification.
   */
  async requestWithProgress<P extends WorkDoneParams, R>(
    type: RequestType<P, R, void>,
    params: P,
    title: string,
  ): Promise<R> {
    const client = await this.ready();
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: true },
      async (progress, cancellation) => {
        const workDoneToken = `tileir-${randomUUID()}`;
        let reported = 0;
        const subscription = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
          if (value.kind === 'end') {
            return;
          }
          const increment =
            value.percentage !== undefined ? Math.max(0, value.percentage - reported) : undefined;
          reported = value.percentage ?? reported;
          progress.report({ message: value.message, increment });
        });
        try {
          return await client.sendRequest(type, { ...params, workDoneToken }, cancellation);
        } finally {
          subscription.dispose();
        }
      },
    );
  }

  dispose(): void {
    void this.client?.dispose();
    this.client = undefined;
    this.outputChannel.dispose();
    this.traceChannel.dispose();
  }
}
