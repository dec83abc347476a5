// What the VS Code webview gives its scripts, for the type check of host.js (see
// daemon/agentd/web/ui/tsconfig.json).
declare function acquireVsCodeApi(): {
  postMessage(message: unknown): void;
  getState(): any;
  setState(state: unknown): void;
};
