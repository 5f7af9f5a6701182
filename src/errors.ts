// The one base class for errors of our own choosing. Every error carries a
// stable snake_case `code`; each layer's subclass knows how it maps outward
// (an HTTP status here, an end reason or SIP status elsewhere).

export class GatewayError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus: number = 500,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
