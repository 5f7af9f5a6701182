// All repositories over one database handle.
import { SqliteApiKeyRepository } from './api-key-repository.js';
import { SqliteCallHistoryRepository } from './call-history-repository.js';
import { SqliteCallRepository } from './call-repository.js';
import { SqliteCompanyRepository } from './company-repository.js';
import type { Db } from './database.js';
import { DocumentRepository } from './document-repository.js';
import { SqliteLiveDialogRepository } from './live-dialog-repository.js';
import type { Agent, OutboundRoute, SipTrunk, VoipPhone } from '../model/entities.js';
import { SqliteOptOutRepository } from './opt-out-repository.js';
import { SqliteScheduleRepository } from './schedule-repository.js';
import { SqliteWebhookRepository } from './webhook-repository.js';

export interface Store {
  db: Db;
  /** One SQLite transaction (savepoints when nested). */
  unitOfWork: { run<T>(fn: () => T): T };
  companies: SqliteCompanyRepository;
  apiKeys: SqliteApiKeyRepository;
  agents: DocumentRepository<Agent>;
  sipTrunks: DocumentRepository<SipTrunk>;
  voipPhones: DocumentRepository<VoipPhone>;
  outboundRoutes: DocumentRepository<OutboundRoute>;
  calls: SqliteCallRepository;
  optOuts: SqliteOptOutRepository;
  schedules: SqliteScheduleRepository;
  callHistory: SqliteCallHistoryRepository;
  dialogs: SqliteLiveDialogRepository;
  /** Webhook endpoints and the outbox of their events (issue 25). */
  webhooks: SqliteWebhookRepository;
}

export function createStore(db: Db): Store {
  const webhooks = new SqliteWebhookRepository(db);
  // Each change of a call record writes the events it reports in its own transaction.
  const calls = new SqliteCallRepository(db, (before, after, at) =>
    webhooks.recordCallChange(before, after, at),
  );
  return {
    db,
    unitOfWork: { run: (fn) => db.transaction(fn)() },
    companies: new SqliteCompanyRepository(db),
    apiKeys: new SqliteApiKeyRepository(db),
    agents: new DocumentRepository<Agent>(db, 'agent'),
    sipTrunks: new DocumentRepository<SipTrunk>(db, 'sip_trunk'),
    voipPhones: new DocumentRepository<VoipPhone>(db, 'voip_phone'),
    outboundRoutes: new DocumentRepository<OutboundRoute>(db, 'outbound_route'),
    calls,
    optOuts: new SqliteOptOutRepository(db),
    schedules: new SqliteScheduleRepository(db),
    callHistory: new SqliteCallHistoryRepository(db, calls),
    dialogs: new SqliteLiveDialogRepository(db),
    webhooks,
  };
}
