// Maps every error to the catalogue's body: `{ error, reason }` for 400/402
// and the generic ones, the refusal shape of spec §2.4 when there are
// details. An unexpected error is a 500 `internal_error`, logged once.
import { SIP_TEXT_PATTERN } from '../model/sip-values.js';
import type { FastifyError, FastifyInstance } from 'fastify';
import { GatewayError } from '../errors.js';
import { ERROR_CATALOGUE } from './error-catalogue.js';

export interface ErrorBody {
  error: string;
  reason: string;
  httpStatus?: number;
  details?: Record<string, unknown>;
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({
      error: 'not_found',
      reason: `No route ${request.method} ${request.url.split('?')[0]}.`,
    });
  });

  app.setErrorHandler((err: FastifyError | GatewayError | Error, request, reply) => {
    const { status, body } = toResponse(err);
    if (status >= 500) request.log.error({ err }, 'request failed');
    if (body.details && typeof body.details.retryAfterSeconds === 'number') {
      void reply.header('retry-after', String(body.details.retryAfterSeconds));
    }
    void reply.code(status).send(body);
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
  const fe = err as FastifyError;
  if (fe.validation) {
    const first = fe.validation[0];
    const where = first?.instancePath
      ? first.instancePath.slice(1).replace(/\//g, '.')
      : (fe.validationContext ?? 'body');
    if (first?.keyword === 'additionalProperties') {
      const name = String((first.params as { additionalProperty?: string }).additionalProperty);
      return bad(
        'unknown_field',
        `Unknown field "${name}"${where !== 'body' ? ` in ${where}` : ''}.`,
      );
    }
    // Text bound for a SIP message (model/sip-values.ts): say what is wrong, not the regex.
    const unsafe = fe.validation.find(
      (v) =>
        v.keyword === 'pattern' && (v.params as { pattern?: string }).pattern === SIP_TEXT_PATTERN,
    );
    if (unsafe) {
      const field = unsafe.instancePath.slice(1).replace(/\//g, '.') || where;
      return bad(
        'invalid_body',
        `${field} must not contain CR, LF, NUL or other control characters (it goes into a SIP message).`,
      );
    }
    return bad('invalid_body', `${where} ${first?.message ?? 'is invalid'}.`);
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
  }
  if (fe instanceof SyntaxError || (fe.statusCode === 400 && /JSON/i.test(fe.message))) {
    return bad('invalid_json', 'The request body is not valid JSON.');
  }
  if (fe.statusCode === 429) {
    return {
      status: 429,
      body: {
        error: 'rate_limit_exceeded',
        reason: 'Too many requests; retry after the time in Retry-After.',
      },
    };
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return bad('invalid_body', fe.message);
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
