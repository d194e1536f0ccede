/**
 * The server host: starts, restarts and stops the language client, sends it commands, and shows
 * its state and the vault's health in the status bar.
 */
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  ShowMessageNotification,
  State,
  type MessageType,
} from 'vscode-languageclient/node';
import { createClient, type ClientHooks, type SavePageHandler } from './client';
import { notFoundMessage } from './discovery';
import { findServer } from './launch';
import { errorText } from './pages';
import { parseStatus, pickStatus, statusBarView, type ClientState, type VaultStatus } from './status';

const STATUS_NOTIFICATION = 'echoes/statusChanged';

/** Starts, stops and restarts the language client; owns the status bar item. */
export class ServerHost implements ClientHooks {
  /** The save flow of the server's "Save through EchoesVault" code action, set once the commands exist. */
  savePage: SavePageHandler | undefined;
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private state: ClientState = 'starting';
  private readonly statuses = new Map<string, VaultStatus>();
  /** Server command requests in flight; their errors are shown by the command, not twice. */
  private inFlight = 0;
  private readonly recentErrors = new Map<string, number>();
  private notFoundShown = false;
  private notFound = notFoundMessage();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly statusItem: vscode.StatusBarItem,
  ) {}

  /** The running client, started on first use. Undefined when no server could be started. */
  ensure(): Promise<LanguageClient | undefined> {
    if (this.client?.isRunning()) {
      return Promise.resolve(this.client);
    }
    if (!this.starting) {
      this.starting = this.start().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  async restart(): Promise<void> {
    await this.stop();
    this.notFoundShown = false;
    await this.ensure();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.log.warn(`Stopping the language server: ${errorText(error)}`);
      }
    }
    this.statuses.clear();
    this.setState('stopped');
  }

  /** The "server not found" error, with the install commands and a button to open the settings. */
  showNotFound(): void {
    void vscode.window.showErrorMessage(this.notFound, 'Open Settings', 'Show Log').then((choice) => {
      if (choice === 'Open Settings') {
        // echoes.server.* are machine settings: in a remote window (SSH, containers, code-server)
        // they live in the remote machine's settings.
        if (vscode.env.remoteName) {
          void vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query: 'echoes.server' });
        } else {
          void vscode.commands.executeCommand('workbench.action.openSettings', 'echoes.server');
        }
      } else if (choice === 'Show Log') {
        this.log.show();
      }
    });
  }

  /** Whether an error text is the "no server" message of the last start. */
  isNotFoundError(text: string): boolean {
    return text === this.notFound;
  }

  /** Sends `workspace/executeCommand` and returns the result; rejects with the server's error. */
  async execute(command: string, arg: Record<string, unknown>): Promise<unknown> {
    const client = await this.ensure();
    if (!client) {
      throw new Error(this.notFound);
    }
    this.inFlight++;
    try {
      return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg] });
    } catch (error) {
      this.recentErrors.set(errorText(error), Date.now());
      throw error;
    } finally {
      this.inFlight--;
    }
  }

  renderStatus(): void {
    const active = vscode.window.activeTextEditor?.document.uri.toString();
    const view = statusBarView(this.state, pickStatus(this.statuses, active));
    this.statusItem.text = view.text;
    this.statusItem.tooltip = view.tooltip;
    this.statusItem.command = this.state === 'not-found' ? 'echoes.restartServer' : 'echoes.showStatus';
    this.statusItem.backgroundColor =
      view.tone === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : view.tone === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.statusItem.show();
  }

  private setState(state: ClientState): void {
    this.state = state;
    this.renderStatus();
  }

  private async start(): Promise<LanguageClient | undefined> {
    this.setState('starting');
    const launch = await findServer(this.context, this.log);
    if (!launch.found) {
      this.setState('not-found');
      this.notFound = launch.notFound;
      this.log.error(this.notFound);
      if (!this.notFoundShown) {
        this.notFoundShown = true;
        this.showNotFound();
      }
      return undefined;
    }
    const candidate = launch.candidate;
    this.log.info(`Starting ${candidate.label}, ${launch.version}`);
    const client = createClient(candidate, launch.cwd, this.log, this);
    client.onNotification(STATUS_NOTIFICATION, (params: unknown) => {
      const status = parseStatus(params);
      if (status) {
        this.statuses.set(status.workspace, status);
        this.renderStatus();
      } else {
        this.log.warn(`Ignored a malformed ${STATUS_NOTIFICATION}: ${JSON.stringify(params)}`);
      }
    });
    this.context.subscriptions.push(
      client.onDidChangeState((event) => {
        if (event.newState === State.Running) {
          this.installMessageFilter(client);
          this.setState('running');
        } else if (event.newState === State.Stopped && this.client === client) {
          this.setState('stopped');
        }
      }),
    );
    try {
      await client.start();
    } catch (error) {
      this.log.error(`The language server did not start: ${errorText(error)}`);
      void vscode.window.showErrorMessage(
        `EchoesVault: the language server (${candidate.label}) did not start: ${errorText(error)}`,
      );
      this.setState('stopped');
      return undefined;
    }
    this.client = client;
    this.installMessageFilter(client);
    this.setState('running');
    return client;
  }

  /**
   * The server reports a failed command twice: as the error response and as a showMessage.
   * The command shows the error (with its buttons); the duplicate message only goes to the log.
   */
  private installMessageFilter(client: LanguageClient): void {
    client.onNotification(ShowMessageNotification.type, (message) => {
      const isError = (message.type as MessageType) === 1;
      const now = Date.now();
      for (const [text, at] of this.recentErrors) {
        if (now - at > 5000) {
          this.recentErrors.delete(text);
        }
      }
      const duplicate =
        isError &&
        (this.inFlight > 0 ||
          [...this.recentErrors.keys()].some((text) => text.includes(message.message) || message.message.includes(text)));
      if (duplicate) {
        this.log.info(`Server message: ${message.message}`);
        return;
      }
      switch (message.type) {
        case 1:
          void vscode.window.showErrorMessage(message.message);
          break;
        case 2:
          void vscode.window.showWarningMessage(message.message);
          break;
        default:
          void vscode.window.showInformationMessage(message.message);
      }
    });
  }
}
