/** The protocol client's public surface (no `vscode` imports anywhere below this folder). */
export { AgentdClient, type ClientOptions, type ClientState, type FileHandler, type PermissionHandler, type QuestionHandler } from './client';
export { confineToFolders, OutsideWorkspace } from './confine';
export { AgentdError } from './errors';
export { type ConnectionMode, type Launch, LaunchError, type LaunchSettings, resolveLaunch } from './launch';
export { type NestedSession, nestSessions } from './nesting';
export { reverseUnifiedDiff } from './patch';
export * from '../protocol';
