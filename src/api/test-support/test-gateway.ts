// An in-process gateway for API tests: :memory: SQLite, a manual clock, and
// helpers to create companies, keys, trunks and agents.
import { DestinationGuard } from '../../net/destination-guard.js';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { Registry } from 'prom-client';
import { AccountService, type NewApiKey, type PlanLimits } from '../../accounts/account-service.js';
import { CallService, type CallDispatcher } from '../../calls/call-service.js';
import { ManualClock } from '../../clock.js';
import { openDatabase } from '../../store/database.js';
import type { Agent, Company, SipTrunk } from '../../model/entities.js';
import { createStore, type Store } from '../../store/store.js';
import { buildApp } from '../build-app.js';
import type { LoadSheddingConfig } from '../load-shedding.js';

export interface TestGateway {
  app: FastifyInstance;
  store: Store;
  clock: ManualClock;
  accounts: AccountService;
  /** A company with a full-access key, a default trunk and an agent. */
  tenant(name?: string, plan?: PlanLimits, parentId?: string | null): Promise<Tenant>;
  close(): Promise<void>;
}

export interface Tenant {
  company: Company;
  key: string;
  trunk: SipTrunk;
  agent: Agent;
  /** Another key of this company. */
  addKey(spec: Partial<NewApiKey>): string;
  request(
    opts: InjectOptions & { key?: string | null; companyId?: string },
  ): Promise<LightMyRequestResponse>;
}

export async function startTestGateway(
  opts: {
    rateLimitMax?: number;
    bodyLimitBytes?: number;
    dispatcher?: CallDispatcher;
    shedding?: Partial<LoadSheddingConfig>;
    webhooks?: { allowHttp?: boolean; allowedNetworks?: string[] };
  } = {},
): Promise<TestGateway> {
  const store = createStore(openDatabase(':memory:'));
  const clock = new ManualClock(Date.UTC(2026, 5, 10, 15, 0, 0));
  const accounts = new AccountService(store, clock);
  const calls = new CallService(store, clock, { dispatcher: opts.dispatcher });
  const app = await buildApp({
    webhooks: {
      allowHttp: opts.webhooks?.allowHttp ?? false,
      secretOverlapSeconds: 3600,
      guard: new DestinationGuard(opts.webhooks?.allowedNetworks ?? []),
    },
    config: {
      bodyLimitBytes: opts.bodyLimitBytes ?? 65536,
      trustProxy: false,
      rateLimitMax: opts.rateLimitMax ?? 10_000,
      rateLimitWindowMs: 60_000,
      maxEventLoopDelayMs: 0,
      maxHeapUsedMb: 0,
      maxRssMb: 0,
      maxCallRequestsInFlight: 64,
      overloadRetryAfterSeconds: 2,
      ...opts.shedding,
    },
    store,
    clock,
    calls,
    accounts,
    metrics: new Registry(),
    readiness: { notReadyReason: () => undefined },
    logger: false,
  });
  await app.ready();

  const tenant = async (
    name = 'acme',
    plan: PlanLimits = {},
    parentId: string | null = null,
  ): Promise<Tenant> => {
    const company = accounts.createCompany(name, parentId, plan);
    const { secret: key } = accounts.createApiKey(company.id, { name: 'full', fullAccess: true });
    const request: Tenant['request'] = (o) => {
      const { key: k, companyId, headers, ...rest } = o;
      const h: Record<string, string> = { ...(headers as Record<string, string> | undefined) };
      if (k !== null) h['x-api-key'] = k ?? key;
      if (companyId) h['x-company-id'] = companyId;
      return app.inject({ ...rest, headers: h });
    };
    const trunkRes = await request({
      method: 'POST',
      url: '/api/v1/phones/sip-trunks',
      payload: {
        name: `${name}-trunk`,
        host: '127.0.0.1',
        port: 5090,
        isDefault: true,
        callerIds: ['+12125550100', '+442071838750'],
        defaultCallerId: '+12125550100',
      },
    });
    const agentRes = await request({
      method: 'POST',
      url: '/api/v1/agents',
      payload: { name: `${name}-agent`, websocketUrl: 'ws://127.0.0.1:9/agent' },
    });
    if (trunkRes.statusCode !== 201 || agentRes.statusCode !== 201)
      throw new Error(`tenant setup failed: ${trunkRes.body} ${agentRes.body}`);
    return {
      company,
      key,
      trunk: trunkRes.json(),
      agent: agentRes.json(),
      addKey: (spec) =>
        accounts.createApiKey(company.id, { name: 'extra', fullAccess: false, ...spec }).secret,
      request,
    };
  };

  return { app, store, clock, accounts, tenant, close: () => app.close() };
}
