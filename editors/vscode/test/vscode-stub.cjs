// A stand-in for the `vscode` module, enough to activate the extension bundle under node:
// it records what the extension registers and serves settings from `stub.settings` (the user's)
// and `stub.workspaceSettings` (the repository's `.vscode/settings.json`, which `get` prefers, as
// the workbench does for settings that are not restricted). The real
// workbench is exercised by tests/vscode (code-server); this layer is for fast checks.
const registered = { commands: new Map(), views: new Map(), providers: new Map(), statusItems: [], output: [] };
const stub = {
  settings: {},
  workspaceSettings: {},
  trusted: true,
  folders: [],
  registered,
};

class Disposable {
  constructor(fn = () => {}) {
    this.dispose = fn;
  }
}
class ThemeIcon {
  constructor(id) {
    this.id = id;
  }
}
class ThemeColor {
  constructor(id) {
    this.id = id;
  }
}
const Uri = {
  file: (path) => ({ scheme: 'file', fsPath: path, path }),
  joinPath: (base, ...parts) => ({ ...base, fsPath: [base.fsPath, ...parts].join('/'), path: [base.path, ...parts].join('/') }),
  from: (parts) => parts,
};

module.exports = {
  __stub: stub,
  Disposable,
  ThemeIcon,
  ThemeColor,
  Uri,
  StatusBarAlignment: { Left: 1, Right: 2 },
  window: {
    createOutputChannel: (name) => {
      const channel = { name, lines: [], appendLine: (line) => channel.lines.push(line), show() {}, dispose() {} };
      registered.output.push(channel);
      return channel;
    },
    createStatusBarItem: (id) => {
      const item = { id, text: '', show() {}, dispose() {} };
      registered.statusItems.push(item);
      return item;
    },
    registerWebviewViewProvider: (id, provider) => {
      registered.views.set(id, provider);
      return new Disposable();
    },
    showErrorMessage: async () => undefined,
    showInformationMessage: async () => undefined,
    showWarningMessage: async () => undefined,
  },
  workspace: {
    get isTrusted() {
      return stub.trusted;
    },
    get workspaceFolders() {
      return stub.folders.map((path) => ({ uri: Uri.file(path) }));
    },
    getConfiguration: () => ({
      get: (key) => stub.workspaceSettings[key] ?? stub.settings[key],
      inspect: (key) => ({ key: `agentd.${key}`, globalValue: stub.settings[key], workspaceValue: stub.workspaceSettings[key] }),
    }),
    registerTextDocumentContentProvider: (scheme, provider) => {
      registered.providers.set(scheme, provider);
      return new Disposable();
    },
    textDocuments: [],
  },
  commands: {
    registerCommand: (id, run) => {
      registered.commands.set(id, run);
      return new Disposable();
    },
    executeCommand: async () => undefined,
  },
};
