// The public routes: health, readiness, metrics, OpenAPI (registered outside
// the authenticated scope, see build-app.ts).
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export interface Readiness {
  /** Why the gateway cannot take calls now, or undefined when it can. */
  notReadyReason(): string | undefined;
}

export function registerSystemRoutes(
  app: FastifyInstance,
  readiness: Readiness,
  metrics: Registry,
): void {
  const open = {
    config: { rateLimit: false },
    schema: { tags: ['System'] },
  };
  app.get('/healthz', open, async () => ({ status: 'ok' }));
  app.get('/readyz', open, async (_request, reply) => {
    const reason = readiness.notReadyReason();
    if (reason) return reply.code(503).send({ status: 'not_ready', reason });
    return { status: 'ready' };
  });
  app.get(
    '/metrics',
    { ...open, schema: { ...open.schema, hide: true } },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.metrics()),
  );
  app.get('/openapi.json', { ...open, schema: { ...open.schema, hide: true } }, async () =>
    app.swagger(),
  );
}
