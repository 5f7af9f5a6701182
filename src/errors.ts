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

/** Characters never echoed: controls, format marks (bidi overrides), lone surrogates, line separators. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
const QUOTE_MAX = 40;

/** The requester's text, quoted for an error reason: unsafe characters removed, at most 40 characters. */
export function quoteForReason(text: string): string {
  return `"${shortenForReason(text)}"`;
}

/** The requester's text, made safe to echo in an error reason (see quoteForReason), unquoted. */
export function shortenForReason(text: string): string {
  const chars = Array.from(text.replace(UNSAFE, ''));
  return chars.length > QUOTE_MAX ? `${chars.slice(0, QUOTE_MAX - 1).join('')}…` : chars.join('');
}
