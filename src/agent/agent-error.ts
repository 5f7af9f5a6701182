// Errors of the agent bridge. Each code maps to the call's end reason; the
// classification lives here, next to where the failure happens.
import { GatewayError } from '../errors.js';

export type AgentErrorCode =
  /** Refused, timed out, DNS failure, TLS failure or a non-101 HTTP answer. */
  | 'agent_unreachable'
  /** The socket failed after it was open. */
  | 'agent_connection_lost';

export class AgentError extends GatewayError {
  declare readonly code: AgentErrorCode;

  constructor(code: AgentErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, 502, details);
  }
}
