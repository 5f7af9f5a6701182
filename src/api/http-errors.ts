// The answers that never reach a route or the error handler, in the
// catalogue's `{ error, reason }` shape like every other: Node's own refusals
// of a malformed request (400, 408, 431, written on the socket), fastify's
// router errors (bad percent-encoding 400, over-long path parameter 414), a
// missing Host (400), and 404/405 for paths and methods with no route.
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './error-catalogue.js';
import type { ErrorBody } from './error-handler.js';

/** fastify's `clientErrorHandler`: the request never parsed, so answer on the socket and close it. */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer (Node's 'clientError' docs).
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, body] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, { error: 'request_timeout', reason: 'The request did not arrive in time.' }]
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [
            431,
            {
              error: 'header_fields_too_large',
              reason: 'The request line and headers exceed 16 KB; send less in them.',
            },
          ]
        : [
            400,
            {
              error: 'invalid_request',
              reason: 'The HTTP request is malformed (request line or headers).',
            },
          ];
  if (socket.writable) {
    const json = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
    );
  }
  socket.destroy();
}

/** fastify's `frameworkErrors`: router failures before any route is chosen. */
export function frameworkErrors(
  err: Error & { code?: string },
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void reply.code(414).send({
      error: 'uri_too_long',
      reason: 'A path parameter is longer than the server accepts (100 characters).',
    } satisfies ErrorBody);
    return;
  }
  if (err.code === 'FST_ERR_BAD_URL') {
    void reply.code(400).send({
      error: 'invalid_request',
      reason: 'The path has malformed percent-encoding.',
    } satisfies ErrorBody);
    return;
  }
  void reply.code(500).send({
    error: 'internal_error',
    reason: 'Unexpected server error; retry or contact support.',
  } satisfies ErrorBody);
}

/**
 * 404 for a path no route has, 405 with Allow (RFC 9110 §15.5.6) for a path
 * that exists with other methods; and HTTP/1.1 without Host is refused here
 * (RFC 9112 §3.2), since Node's own refusal has no body.
 */
export function registerRouteMisses(app: FastifyInstance): void {
  const routes: Array<{ pattern: RegExp; method: string }> = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const pattern = patternOf(route.url ?? route.path);
    for (const method of methods) routes.push({ pattern, method });
  });
  app.addHook('onRequest', async (request) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      throw new ApiError('invalid_request', 'An HTTP/1.1 request needs a Host header.');
    }
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = [
      ...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method)),
    ].sort();
    if (allowed.length > 0) {
      void reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send({
          error: 'method_not_allowed',
          reason: `${request.method} is not allowed here; use ${allowed.join(', ')}.`,
        } satisfies ErrorBody);
      return;
    }
    void reply.code(404).send({
      error: 'not_found',
      reason: `No route ${request.method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path}.`,
    } satisfies ErrorBody);
  });
}

/** A fastify route path ("/calls/:id", "/docs/*") as a regular expression over concrete paths. */
function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((seg) =>
      seg === '*'
        ? '.*'
        : seg.startsWith(':')
          ? '[^/]+'
          : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${source}/?$`);
}
