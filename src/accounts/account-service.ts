// Companies, plans and API keys: used by the API, the CLI and the first-start
// bootstrap alike, so all three create the same objects the same way.
import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey, maskApiKey } from './api-key-secret.js';
import type { Clock } from '../clock.js';
import type { ApiKey, Company, CompanySettings, OperationGroup, Plan } from '../model/entities.js';
import { OPERATION_GROUPS } from '../model/entities.js';
import type { Store } from '../store/store.js';

export interface NewApiKey {
  name: string;
  fullAccess: boolean;
  groups?: OperationGroup[];
  allowedIp?: string | null;
  /** Only for the bootstrap key: use exactly this secret. */
  secret?: string;
}

export type PlanLimits = Partial<Omit<Plan, 'companyId' | 'modifiedAt'>>;

export class AccountService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  createCompany(
    name: string,
    parentId: string | null = null,
    plan: PlanLimits = {},
    settings: CompanySettings = {},
  ): Company {
    const now = this.iso();
    return this.store.unitOfWork.run(() => {
      const company = this.store.companies.insert({
        id: randomUUID(),
        name,
        parentId,
        settings,
        createdAt: now,
      });
      this.store.companies.savePlan({
        companyId: company.id,
        allowOutbound: plan.allowOutbound ?? true,
        credits: plan.credits ?? null,
        secondsRemaining: plan.secondsRemaining ?? null,
        maxChannels: plan.maxChannels ?? null,
        maxConcurrentCalls: plan.maxConcurrentCalls ?? null,
        modifiedAt: now,
      });
      return company;
    });
  }

  updatePlan(companyId: string, limits: PlanLimits): Plan {
    const current = this.store.companies.getPlan(companyId);
    if (!current) throw new Error(`company ${companyId} has no plan`);
    return this.store.companies.savePlan({
      ...current,
      ...limits,
      companyId,
      modifiedAt: this.iso(),
    });
  }

  /** Returns the stored key and, once, its full secret. */
  createApiKey(companyId: string, spec: NewApiKey): { key: ApiKey; secret: string } {
    const secret = spec.secret ?? generateApiKey();
    const key = this.store.apiKeys.insert({
      id: randomUUID(),
      companyId,
      name: spec.name,
      keyHash: hashApiKey(secret),
      masked: maskApiKey(secret),
      fullAccess: spec.fullAccess,
      groups: spec.fullAccess ? [...OPERATION_GROUPS] : (spec.groups ?? []),
      allowedIp: spec.allowedIp || null,
      createdAt: this.iso(),
      lastUsedAt: null,
    });
    return { key, secret };
  }

  /**
   * First start (DESIGN.md): with a bootstrap key and no company yet, create
   * company "default" holding a full-access key of exactly that value.
   */
  bootstrap(apiKey: string): Company | undefined {
    if (!apiKey) return undefined;
    // Serialized: daemons starting together on one PostgreSQL create it once.
    return this.store.unitOfWork.run(() => {
      if (this.store.companies.count() > 0) return undefined;
      const company = this.createCompany('default');
      this.createApiKey(company.id, { name: 'bootstrap', fullAccess: true, secret: apiKey });
      return company;
    }, ['bootstrap']);
  }

  private iso(): string {
    return new Date(this.clock.now()).toISOString();
  }
}
