// Every status the HTTP server can answer with an error, sent for real over a
// socket (Node's own refusals never pass through app.inject), and each body
// checked: `{ error, reason }` with a catalogue code of that status, nothing
// of Node's or fastify's own wording.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallDispatcher } from '../calls/call-service.js';
import { ERROR_CATALOGUE } from './error-catalogue.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from './error-handler.js';
import { clientErrorHandler } from './http-errors.js';
import { startTestGateway, type Tenant, type TestGateway } from './test-support/test-gateway.js';

let gw: TestGateway;
let acme: Tenant;
let port = 0;
const draining = { isDraining: false };

beforeAll(async () => {
  const dispatcher: CallDispatcher = {
    get isDraining() {
      return draining.isDraining;
    },
    accepted: () => {},
    hangup: async () => undefined,
  };
  gw = await startTestGateway({ bodyLimitBytes: 4096, rateLimitMax: 40, dispatcher });
  acme = await gw.tenant('acme');
  await gw.app.listen({ host: '127.0.0.1', port: 0 });
  port = (gw.app.server.address() as { port: number }).port;
});
afterAll(() => gw.close());

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes raw bytes and reads the answer until the server closes or 2 s pass. */
function raw(request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    const done = () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [
          l.slice(0, l.indexOf(':')).toLowerCase(),
          l.slice(l.indexOf(':') + 1).trim(),
        ]),
      );
      let body = rest.join('\r\n\r\n');
      if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    };
    socket.on('data', (d) => {
      data += d.toString('latin1');
      // One answer is all we need; keep-alive sockets would otherwise stay open.
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = /content-length:\s*(\d+)/i.exec(data.slice(0, end));
      if (length && data.length >= end + 4 + Number(length[1])) socket.destroy();
    });
    socket.on('close', done);
    socket.on('error', reject);
    setTimeout(() => socket.destroy(), 2000);
  });
}

function unchunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, nl), 16);
    if (!size) return out;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
}

const req = (method: string, path: string, headers: string[] = [], body = '') =>
  raw(
    [
      `${method} ${path} HTTP/1.1`,
      'Host: gw.test',
      'Connection: close',
      ...headers,
      ...(body !== '' || method === 'POST' ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
      '',
      body,
    ].join('\r\n'),
  );
const key = () => `x-api-key: ${acme.key}`;
const json = 'Content-Type: application/json';

/** The body is the catalogue shape, its code is of this status, and nothing of Node's or fastify's shows. */
function expectCatalogue(a: Answer, status: number, code: string): Record<string, unknown> {
  expect(a.status, a.body).toBe(status);
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(a.body) as Record<string, unknown>;
  expect(body.error).toBe(code);
  expect(typeof body.reason).toBe('string');
  expect(ERROR_CATALOGUE[code]?.status).toBe(status);
  expect(
    Object.keys(body).filter((k) => !['error', 'reason', 'httpStatus', 'details'].includes(k)),
  ).toEqual([]);
  expect(a.body).not.toMatch(/FST_|statusCode|Client Error|Bad Request"/);
  return body;
}

describe('every error the server sends has the catalogue shape', () => {
  const dest = '+12125550123';
  const cases: Array<[string, () => Promise<Answer>, number, string]> = [
    [
      'malformed JSON',
      () => req('POST', '/api/v1/phones/calls/initiate-call', [key(), json], '{"a":'),
      400,
      'invalid_json',
    ],
    [
      'a __proto__ key',
      () =>
        req(
          'POST',
          '/api/v1/phones/calls/initiate-call',
          [key(), json],
          '{"__proto__":{"x":1},"destinationNumber":"+12125550123"}',
        ),
      400,
      'invalid_body',
    ],
    [
      'a body that is not an object',
      () => req('POST', '/api/v1/phones/calls/initiate-call', [key(), json], '[1]'),
      400,
      'invalid_body',
    ],
    [
      'no body where one is needed',
      () => req('POST', '/api/v1/phones/calls/initiate-call', [key(), json]),
      400,
      'invalid_body',
    ],
    [
      'a schema failure',
      () =>
        req('POST', '/api/v1/phones/calls/initiate-call', [key(), json], '{"destinationNumber":1}'),
      400,
      'invalid_destination_number',
    ],
    ['a request line Node cannot parse', () => raw('HELLO\r\n\r\n'), 400, 'invalid_request'],
    [
      'an unknown method token',
      () => raw('FOO / HTTP/1.1\r\nHost: gw.test\r\n\r\n'),
      400,
      'invalid_request',
    ],
    [
      'a Content-Length that is not a number',
      () => raw('POST /healthz HTTP/1.1\r\nHost: gw.test\r\nContent-Length: abc\r\n\r\n'),
      400,
      'invalid_request',
    ],
    [
      'HTTP/1.1 without Host',
      () => raw('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n'),
      400,
      'invalid_request',
    ],
    [
      'bad percent-encoding in the path',
      () => req('GET', '/api/v1/phones/calls/%zz', [key()]),
      400,
      'invalid_request',
    ],
    ['no key', () => req('GET', '/api/v1/agents'), 401, 'unauthorized'],
    ['a wrong key', () => req('GET', '/api/v1/agents', ['x-api-key: nope']), 401, 'unauthorized'],
    [
      'a plan without credits',
      async () => {
        const poor = await gw.tenant('poor', { credits: 0 });
        return req(
          'POST',
          '/api/v1/phones/calls/initiate-call',
          [`x-api-key: ${poor.key}`, json],
          JSON.stringify({ destinationNumber: dest, agentId: poor.agent.id }),
        );
      },
      402,
      'insufficient_credits',
    ],
    [
      'a key without the group',
      () =>
        req('GET', '/api/v1/agents', [
          `x-api-key: ${acme.addKey({ name: 'calls-only', groups: ['Calls'] })}`,
        ]),
      403,
      'operation_not_allowed',
    ],
    ['no such route', () => req('GET', '/nowhere', [key()]), 404, 'not_found'],
    ['no such object', () => req('GET', '/api/v1/phones/calls/nope', [key()]), 404, 'not_found'],
    [
      'a method the path does not have',
      () => req('DELETE', '/api/v1/phones/calls/initiate-call', [key()]),
      405,
      'method_not_allowed',
    ],
    ['a method no route has', () => req('PROPFIND', '/healthz'), 405, 'method_not_allowed'],
    [
      'a body over the limit',
      () =>
        req('POST', '/api/v1/agents', [key(), json], JSON.stringify({ name: 'x'.repeat(5000) })),
      413,
      'body_too_large',
    ],
    [
      'a path parameter over 100 characters',
      () => req('GET', `/api/v1/phones/calls/${'a'.repeat(150)}`, [key()]),
      414,
      'uri_too_long',
    ],
    [
      'a text body',
      () => req('POST', '/api/v1/agents', [key(), 'Content-Type: text/plain'], 'hello'),
      415,
      'unsupported_media_type',
    ],
    [
      'headers over 16 KB',
      () => req('GET', '/healthz', [`X-Big: ${'a'.repeat(20_000)}`]),
      431,
      'header_fields_too_large',
    ],
    [
      'a URL over 16 KB',
      () => req('GET', `/${'a'.repeat(17_000)}`),
      431,
      'header_fields_too_large',
    ],
  ];

  it.each(cases.map(([name, send, status, code]) => ({ name, send, status, code })))(
    '$name → $status $code',
    async ({ send, status, code }) => {
      expectCatalogue(await send(), status, code);
    },
  );

  it('405 names the methods the path has in Allow', async () => {
    expect((await req('DELETE', '/healthz')).headers.allow).toBe('GET, HEAD');
    // initiate-call is also a call id to GET /calls/:id
    expect((await req('PUT', '/api/v1/phones/calls/initiate-call', [key()])).headers.allow).toBe(
      'GET, HEAD, POST',
    );
  });

  it('409 refusal (spec §2.4 shape): a second call to a number with one live', async () => {
    const body = JSON.stringify({
      destinationNumber: '+12125550199',
      agentId: acme.agent.id,
      overrideTimeRestriction: true,
      overrideDayRestriction: true,
    });
    expect(
      (await req('POST', '/api/v1/phones/calls/initiate-call', [key(), json], body)).status,
    ).toBe(200);
    const a = await req('POST', '/api/v1/phones/calls/initiate-call', [key(), json], body);
    const refusal = expectCatalogue(a, 409, 'call_already_in_progress');
    expect(refusal).toMatchObject({ httpStatus: 409, details: expect.any(Object) });
  });

  it('503 while draining: server_unavailable with Retry-After', async () => {
    draining.isDraining = true;
    try {
      const a = await req(
        'POST',
        '/api/v1/phones/calls/initiate-call',
        [key(), json],
        JSON.stringify({ destinationNumber: dest, agentId: acme.agent.id }),
      );
      expectCatalogue(a, 503, 'server_unavailable');
      expect(a.headers['retry-after']).toBe(String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    } finally {
      draining.isDraining = false;
    }
  });

  it('500 for an unexpected error: internal_error, nothing of the error itself', async () => {
    const broken = gw.store.agents.list;
    gw.store.agents.list = () => {
      throw new Error('disk on fire at /var/secret');
    };
    try {
      const a = await req('GET', '/api/v1/agents', [key()]);
      expectCatalogue(a, 500, 'internal_error');
      expect(a.body).not.toContain('disk on fire');
    } finally {
      gw.store.agents.list = broken;
    }
  });

  // Last: it spends the key's budget.
  it('429 rate limit: rate_limit_exceeded', async () => {
    let a: Answer | undefined;
    for (let i = 0; i < 60; i++) {
      a = await req('GET', '/api/v1/agents', [key()]);
      if (a.status === 429) break;
    }
    expectCatalogue(a!, 429, 'rate_limit_exceeded');
  });
});

describe('clientErrorHandler (what Node hands it)', () => {
  it('a request that did not arrive in time is 408 request_timeout, and the socket is closed', () => {
    const written: string[] = [];
    let destroyed = false;
    const socket = {
      destroyed: false,
      writable: true,
      write: (s: string) => written.push(s),
      destroy: () => (destroyed = true),
    } as unknown as Socket;
    clientErrorHandler(
      Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }),
      socket,
    );
    const [head = '', body = ''] = written.join('').split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(body)).toEqual({ error: 'request_timeout', reason: expect.any(String) });
    expect(ERROR_CATALOGUE.request_timeout?.status).toBe(408);
    expect(destroyed).toBe(true);
  });

  it('a reset connection gets nothing written', () => {
    const socket = {
      destroyed: false,
      writable: true,
      write: () => {
        throw new Error('must not write');
      },
      destroy: () => {},
    } as unknown as Socket;
    clientErrorHandler(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), socket);
  });
});
