// Bench helper: one fresh process loads dist/extension.js (stub `vscode`) and activates it.
// Prints {"loadMs", "activateMs", "spawned"} as JSON (spawned: processes started by activation).
import { context, loadExtension, stub } from './extension-host.mjs';

stub.settings = {};
const { extension, loadMs } = loadExtension();
const ctx = context();
const started = performance.now();
const { controller } = extension.activate(ctx);
const activateMs = performance.now() - started;
const spawned = controller.client.pid === undefined ? 0 : 1;
for (const item of ctx.subscriptions) item.dispose();
console.log(JSON.stringify({ loadMs, activateMs, spawned }));
