// Load dist/extension.js with test/vscode-stub.cjs standing in for `vscode`.
import Module from 'node:module';
import { join } from 'node:path';
import { here } from './helpers.mjs';

const stubPath = join(here, 'vscode-stub.cjs');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'vscode' ? stubPath : resolve.call(this, request, ...rest);
};
const require = Module.createRequire(import.meta.url);
export const vscode = require(stubPath);
export const stub = vscode.__stub;

/** A fresh extension context with the package.json the workbench would pass. */
export function context() {
  const pkg = require(join(here, '..', 'package.json'));
  return { subscriptions: [], extensionUri: { fsPath: join(here, '..'), path: join(here, '..') }, extension: { packageJSON: pkg } };
}

/** Require the bundle (timed) and return its module and the load time in ms. */
export function loadExtension() {
  const started = performance.now();
  const extension = require(join(here, '..', 'dist', 'extension.js'));
  return { extension, loadMs: performance.now() - started };
}
