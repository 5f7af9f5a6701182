// Maps every error to the catalogue's body: `{ error, reason }` for 400/402
// and the generic ones, the refusal shape of spec §2.4 when there are
// details. An unexpected error is a 500 `internal_error`, logged once; a 503
// (draining) is expected and says when to come back (Retry-After).
import type { FastifyError, FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { GatewayError } from '../errors.js';
import { ApiError, ERROR_CATALOGUE } from './error-catalogue.js';
import { UnavailableError, type RefusalCounter } from './load-shedding.js';
import { schemaError } from './schema-errors.js';

export interface ErrorBody {
  error: string;
  reason: string;
  httpStatus?: number;
  details?: Record<string, unknown>;
}

/** Seconds a client should wait after a 503 from a draining daemon (an overload says its own). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 60;

export function registerErrorHandler(app: FastifyInstance, refusals?: RefusalCounter): void {
  app.setErrorHandler((err: FastifyError | GatewayError | Error, request, reply) => {
    const { status, body } = toResponse(err);
    // A 503 is expected (draining, overloaded): counted, not logged one by one.
    if (status === 503) refusals?.note();
    else if (status >= 500) request.log.error({ err }, 'request failed');
    const retryAfter =
      err instanceof UnavailableError
        ? err.retryAfterSeconds
        : body.details && typeof body.details.retryAfterSeconds === 'number'
          ? body.details.retryAfterSeconds
          : status === 503
            ? UNAVAILABLE_RETRY_AFTER_SECONDS
            : undefined;
    if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
    void reply.code(status).send(body);
  });
}

/**
 * JSON bodies, parsed with prototype poisoning refused by name (a body with
 * `__proto__` is valid JSON, so "not valid JSON" would mislead). An empty
 * body is no body: the route's schema says whether one is needed.
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    const body = String(text);
    if (body.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, sjson.parse(body, { protoAction: 'error', constructorAction: 'error' }));
    } catch (err) {
      done(
        /forbidden (prototype|constructor) property/.test((err as Error).message)
          ? new ApiError(
              'invalid_body',
              'The body holds a forbidden key (__proto__ or constructor.prototype); rename it.',
            )
          : new ApiError('invalid_json', 'The request body is not valid JSON.'),
        undefined,
      );
    }
  });
}

function toResponse(err: FastifyError | GatewayError | Error): { status: number; body: ErrorBody } {
  if (err instanceof GatewayError) {
    const entry = ERROR_CATALOGUE[err.code];
    const status = entry?.status ?? err.httpStatus;
    if (!entry) return internal();
    if (err.details && status !== 400 && status !== 402) {
      return {
        status,
        body: { error: err.code, reason: err.message, httpStatus: status, details: err.details },
      };
    }
    return { status, body: { error: err.code, reason: err.message } };
  }
  if (err.name === 'StoreUnavailableError') {
    // PostgreSQL did not answer within store.timeoutMs (store-bridge.ts): nothing was acknowledged.
    return {
      status: 503,
      body: { error: 'server_unavailable', reason: 'The database did not answer in time; retry.' },
    };
  }
  if (err.name === 'StoreNotDurableError') {
    // The group fsync failed (wal-sync.ts): the writes are not confirmed.
    return {
      status: 503,
      body: {
        error: 'server_unavailable',
        reason: 'The gateway could not make its writes durable (the disk failed); retry.',
      },
    };
  }
  const fe = err as FastifyError;
  if (fe.validation) {
    // A schema failure the route's own formatter did not turn into an ApiError.
    return toResponse(schemaError(fe.validation, fe.validationContext ?? 'body'));
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return bad('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        body: { error: 'body_too_large', reason: 'The request body is too large.' },
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        body: { error: 'unsupported_media_type', reason: 'Send the body as application/json.' },
      };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return bad('invalid_request', 'The body is not as long as its Content-Length says.');
  }
  if (fe instanceof SyntaxError) return bad('invalid_json', 'The request body is not valid JSON.');
  if (fe.statusCode === 429) {
    return {
      status: 429,
      body: {
        error: 'rate_limit_exceeded',
        reason: 'Too many requests; retry after the time in Retry-After.',
      },
    };
  }
  // Any other client error of the framework: our code and words, not its message.
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return bad('invalid_request', 'The request cannot be processed as sent.');
  }
  return internal();
}

function bad(error: string, reason: string): { status: number; body: ErrorBody } {
  return { status: 400, body: { error, reason } };
}

function internal(): { status: number; body: ErrorBody } {
  return {
    status: 500,
    body: { error: 'internal_error', reason: 'Unexpected server error; retry or contact support.' },
  };
}
