// Every PostgreSQL repository over one Queryable (the pool, or the client of
// an open transaction), wired as store.ts wires the SQLite ones: each change
// of a call record writes the webhook events it reports in its own
// transaction (issue 25).
import type { Agent, OutboundRoute, SipTrunk, VoipPhone } from '../../model/entities.js';
import { PgApiKeyRepository } from './pg-api-key-repository.js';
import { PgCallHistoryRepository } from './pg-call-history-repository.js';
import { PgCallRepository } from './pg-call-repository.js';
import { PgCompanyRepository } from './pg-company-repository.js';
import { PgDocumentRepository } from './pg-document-repository.js';
import { PgLiveDialogRepository } from './pg-live-dialog-repository.js';
import { PgOptOutRepository } from './pg-opt-out-repository.js';
import { PgScheduleRepository, type Queryable } from './pg-schedule-repository.js';
import { PgWebhookRepository } from './pg-webhook-repository.js';

export interface PgRepositories {
  companies: PgCompanyRepository;
  apiKeys: PgApiKeyRepository;
  agents: PgDocumentRepository<Agent>;
  sipTrunks: PgDocumentRepository<SipTrunk>;
  voipPhones: PgDocumentRepository<VoipPhone>;
  outboundRoutes: PgDocumentRepository<OutboundRoute>;
  calls: PgCallRepository;
  optOuts: PgOptOutRepository;
  schedules: PgScheduleRepository;
  callHistory: PgCallHistoryRepository;
  dialogs: PgLiveDialogRepository;
  webhooks: PgWebhookRepository;
}

/**
 * The repositories of one node over `db`. `onWritten` is told when webhook
 * deliveries were written (inside the transaction: the caller defers its work).
 */
export function makePgRepositories(
  db: Queryable,
  nodeId: string,
  onWritten: () => void,
): PgRepositories {
  const webhooks = new PgWebhookRepository(db);
  webhooks.onWritten = onWritten;
  const calls = new PgCallRepository(
    db,
    async (before, after, at, tx) => {
      const inTx = new PgWebhookRepository(tx);
      inTx.onWritten = onWritten;
      await inTx.recordCallChange(before, after, at);
    },
    nodeId,
    { hookNeedsWebhooks: true },
  );
  return {
    companies: new PgCompanyRepository(db),
    apiKeys: new PgApiKeyRepository(db),
    agents: new PgDocumentRepository<Agent>(db, 'agent'),
    sipTrunks: new PgDocumentRepository<SipTrunk>(db, 'sip_trunk'),
    voipPhones: new PgDocumentRepository<VoipPhone>(db, 'voip_phone'),
    outboundRoutes: new PgDocumentRepository<OutboundRoute>(db, 'outbound_route'),
    calls,
    optOuts: new PgOptOutRepository(db),
    schedules: new PgScheduleRepository(db),
    callHistory: new PgCallHistoryRepository(db),
    dialogs: new PgLiveDialogRepository(db, nodeId),
    webhooks,
  };
}
