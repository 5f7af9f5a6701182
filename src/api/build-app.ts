// Builds the fastify app from its dependencies. Only main.ts listens.
import { webhookDocs } from './webhook-openapi.js';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { hashApiKey } from '../accounts/api-key-secret.js';
import type { AccountService } from '../accounts/account-service.js';
import type { CallService } from '../calls/call-service.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import type { Store } from '../store/store.js';
import { registerAuth } from './auth.js';
import { ERROR_CATALOGUE } from './error-catalogue.js';
import { registerErrorHandler, registerJsonParser } from './error-handler.js';
import { clientErrorHandler, frameworkErrors, registerRouteMisses } from './http-errors.js';
import {
  RefusalCounter,
  registerPressureGate,
  UnavailableError,
  type LoadSheddingConfig,
} from './load-shedding.js';
import { schemaError } from './schema-errors.js';
import { registerAdminRoutes } from './routes/admin-routes.js';
import { registerAgentRoutes } from './routes/agent-routes.js';
import { registerCallRoutes } from './routes/call-routes.js';
import { registerSystemRoutes, type Readiness } from './routes/system-routes.js';
import { registerVoipSipRoutes, type TrunkHealthSource } from './routes/voip-sip-routes.js';
import { registerWebhookRoutes, type WebhookRouteSettings } from './routes/webhook-routes.js';
import { runUrgentWork } from '../urgent-work.js';

export interface AppDeps {
  config: Pick<
    Config['http'],
    'bodyLimitBytes' | 'trustProxy' | 'rateLimitMax' | 'rateLimitWindowMs'
  > &
    LoadSheddingConfig;
  store: Store;
  clock: Clock;
  calls: CallService;
  accounts: AccountService;
  readiness: Readiness;
  metrics: Registry;
  /** The OPTIONS monitor's view of each trunk; absent when pings are off (every trunk unknown). */
  trunkHealth?: TrunkHealthSource;
  /** Webhook endpoints' rules (issue 25). */
  webhooks: WebhookRouteSettings;
  logger?: Logger | false;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger || undefined,
    bodyLimit: deps.config.bodyLimitBytes,
    trustProxy: deps.config.trustProxy,
    // A request without Host is refused in our words (http-errors.ts), not Node's empty 400.
    http: { requireHostHeader: false },
    // Unknown fields must stay visible to be refused; never coerce types.
    ajv: {
      customOptions: {
        removeAdditional: false,
        coerceTypes: false,
        useDefaults: true,
        allErrors: false,
        // OpenAPI's annotation, shown in the document, ignored by validation.
        keywords: ['example'],
      },
    },
    schemaErrorFormatter: (errors, dataVar) => schemaError(errors, dataVar),
    clientErrorHandler,
    frameworkErrors,
    // Request lines carry numbers in paths (opt-outs): not logged per request.
    logController: new LogController({ disableRequestLogging: true }),
  }) as unknown as FastifyInstance;

  const refusals = new RefusalCounter(deps.logger || undefined);
  app.addHook('onClose', async () => refusals.flush());
  registerErrorHandler(app, refusals);
  registerRouteMisses(app);
  registerJsonParser(app);
  // each request starts and answers at a yield point (urgent-work.ts)
  app.addHook('onRequest', (_request, _reply, done) => {
    runUrgentWork();
    done();
  });
  app.addHook('onSend', (_request, _reply, payload, done) => {
    runUrgentWork();
    done(null, payload);
  });
  // JSON only: a text body is 415, not a string that reaches the handlers.
  app.removeContentTypeParser('text/plain');

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      webhooks: webhookDocs(),
      info: {
        title: 'Outbound AI call gateway',
        version: '1.0.0',
        description: errorCatalogueMarkdown(),
      },
      components: {
        securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  await registerPressureGate(app, deps.config, deps.clock);

  await app.register(rateLimit, {
    global: true,
    max: deps.config.rateLimitMax,
    timeWindow: deps.config.rateLimitWindowMs,
    // Per key; the raw key never becomes a map key (a hash does).
    keyGenerator: (request) => {
      const key = request.headers['x-api-key'];
      return typeof key === 'string' && key !== ''
        ? hashApiKey(key).toString('base64url')
        : request.ip;
    },
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      code: 'rate_limit_exceeded',
      message: `Rate limit exceeded; retry in ${Math.ceil(context.ttl / 1000)} s.`,
    }),
  });

  // Public: health, readiness, metrics, the OpenAPI document (and /docs above).
  registerSystemRoutes(app, deps.readiness, deps.metrics);
  // Everything else is authenticated: the hook lives in this scope, so a route
  // is public only by being registered outside it.
  await app.register(async (api) => {
    // Nothing answered reports a write that is not on disk yet (the store's
    // group fsync, docs/decisions/group-commit.md): at once when none is pending.
    // A failed fsync answers 503 instead (its own answer is not held again).
    const notDurable = new WeakSet<object>();
    api.addHook('onSend', async (request, _reply, payload) => {
      if (notDurable.has(request)) return payload;
      try {
        await deps.store.unitOfWork.durable();
      } catch {
        notDurable.add(request);
        throw new UnavailableError(
          'The gateway could not make its writes durable (the disk failed); nothing in this request is confirmed.',
          deps.config.overloadRetryAfterSeconds,
        );
      }
      return payload;
    });
    registerAuth(api, deps.store, deps.clock);
    registerCallRoutes(api, deps.calls, deps.store, deps.clock, deps.config);
    registerVoipSipRoutes(api, deps.store, deps.clock, deps.trunkHealth);
    registerAgentRoutes(api, deps.store, deps.clock);
    registerWebhookRoutes(api, deps.store, deps.clock, deps.webhooks);
    registerAdminRoutes(api, deps.store, deps.accounts);
  });
  return app;
}

function errorCatalogueMarkdown(): string {
  const rows = Object.entries(ERROR_CATALOGUE)
    .map(([code, e]) => `| ${e.status} | \`${code}\` | ${e.description} |`)
    .join('\n');
  return [
    'Places ONE outbound phone call per request, handled by an AI agent over WebSocket.',
    '',
    'Every endpoint needs the `x-api-key` header; resellers may add `x-company-id`.',
    '',
    '## Error codes',
    '',
    '| HTTP | code | meaning |',
    '|---|---|---|',
    rows,
  ].join('\n');
}
