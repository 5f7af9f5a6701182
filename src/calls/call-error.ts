// Errors of the calls domain. Each has a stable code from the API's error
// catalogue; the API layer maps the code to its HTTP status and body.
import { GatewayError } from '../errors.js';

export class CallError extends GatewayError {
  constructor(code: string, reason: string, details?: Record<string, unknown>) {
    super(code, reason, 400, details);
  }
}
