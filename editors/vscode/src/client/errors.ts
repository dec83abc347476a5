/** Errors of the protocol client: a daemon's JSON-RPC error, or a lost connection. */
import { ErrorCodes } from '../protocol';

/** A JSON-RPC error answer (or a local failure given an agentd error code). */
export class AgentdError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'AgentdError';
  }
}

/** Normalise whatever vscode-jsonrpc rejected with into an AgentdError. */
export function toAgentdError(error: unknown): AgentdError {
  if (error instanceof AgentdError) return error;
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'number') {
    const message = 'message' in error ? String(error.message) : 'request failed';
    // vscode-jsonrpc's own codes for a disposed or closed connection are below -32090.
    const lost = error.code <= -32090 && error.code >= -32099;
    return new AgentdError(
      lost ? `the connection to agentd was lost (${message})` : message,
      lost ? ErrorCodes.ConnectionLost : error.code,
      'data' in error ? error.data : undefined,
    );
  }
  return new AgentdError(error instanceof Error ? error.message : String(error), ErrorCodes.ConnectionLost);
}
