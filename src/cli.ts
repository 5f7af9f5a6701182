// Operator CLI on the configured database: companies, API keys, trunks,
// agents; and the config table/defaults. `npm run cli -- help` lists it all.
// Output is JSON on stdout so scripts can read it.
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { AccountService } from './accounts/account-service.js';
import { isUnspecifiedAddress, keyView } from './api/routes/admin-routes.js';
import { trunkView } from './api/routes/voip-sip-routes.js';
import type { SipTrunk } from './model/entities.js';
import { unsafeTrunkField } from './model/sip-values.js';
import { systemClock } from './clock.js';
import { CONFIG_SCHEMA } from './config/config-schema.js';
import { ConfigError, defaultConfigObject, loadConfig } from './config/load-config.js';
import { openDatabase, type Db } from './store/database.js';
import { OPERATION_GROUPS, type OperationGroup } from './model/entities.js';
import { createStore, type Store } from './store/store.js';
import { openPgStore } from './store/pg/pg-store.js';

const HELP = `usage: npm run cli -- <command> [options]

  company create --name N [--parent ID] [--credits X] [--seconds S]
                 [--channels C] [--concurrent K] [--no-outbound]
  company list
  key create --company ID --name N [--groups "Calls,Agents"] [--ip IP]
             (no --groups: a full-access key; the secret is printed once)
  key list --company ID
  key revoke --company ID --id KEY_ID
  trunk create --company ID --name N --host H [--port P] [--transport udp|tcp]
               [--username U] [--password P] [--caller-id +E164] [--default]
               [--options-ping]   (ping it with OPTIONS; off by default)
  trunk list --company ID
  agent create --company ID --name N --url ws://… [--prompt TEXT]
  agent list --company ID
  config defaults     print the default configuration (config/default.json)
  config table        print the configuration table (README)
`;

const OPTIONS = {
  name: { type: 'string' },
  parent: { type: 'string' },
  company: { type: 'string' },
  credits: { type: 'string' },
  seconds: { type: 'string' },
  channels: { type: 'string' },
  concurrent: { type: 'string' },
  'no-outbound': { type: 'boolean' },
  groups: { type: 'string' },
  ip: { type: 'string' },
  id: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  transport: { type: 'string' },
  username: { type: 'string' },
  password: { type: 'string' },
  'caller-id': { type: 'string' },
  default: { type: 'boolean' },
  'options-ping': { type: 'boolean' },
  url: { type: 'string' },
  prompt: { type: 'string' },
} as const;

class UsageError extends Error {}

/**
 * A one-shot command has no group fsync waiting behind it (wal-sync.ts):
 * each of its commits syncs the WAL itself before the command answers.
 */
export function cliDatabase(path: string): Db {
  const db = openDatabase(path);
  db.pragma('synchronous = FULL');
  return db;
}

export function runCli(argv: string[], openStore: () => Store, print: (v: unknown) => void): void {
  const { values: o, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const [noun, verb] = positionals;
  const need = (key: keyof typeof o): string => {
    const v = o[key];
    if (typeof v !== 'string' || v === '') throw new UsageError(`--${key} is required`);
    return v;
  };
  const num = (key: keyof typeof o): number | null => {
    const v = o[key];
    if (v === undefined) return null;
    const n = Number(v);
    if (typeof v !== 'string' || Number.isNaN(n)) throw new UsageError(`--${key} must be a number`);
    return n;
  };

  if (noun === 'config' && verb === 'defaults') return print(defaultConfigObject());
  if (noun === 'config' && verb === 'table') {
    const rows = CONFIG_SCHEMA.map(
      (e) =>
        `| \`${e.key}\` | \`${e.env}\` | \`${JSON.stringify(e.default)}\` | ${e.description} |`,
    );
    return print(
      ['| key | environment | default | description |', '|---|---|---|---|', ...rows].join('\n'),
    );
  }
  if (!noun || noun === 'help') return print(HELP);

  const store = openStore();
  const accounts = new AccountService(store, systemClock);
  const company = (): string => {
    const id = need('company');
    if (!store.companies.get(id)) throw new UsageError(`no company ${id}`);
    return id;
  };
  const now = new Date().toISOString();

  switch (`${noun} ${verb}`) {
    case 'company create':
      return print(
        accounts.createCompany(need('name'), o.parent ?? null, {
          allowOutbound: !o['no-outbound'],
          credits: num('credits'),
          secondsRemaining: num('seconds'),
          maxChannels: num('channels'),
          maxConcurrentCalls: num('concurrent'),
        }),
      );
    case 'company list':
      return print(
        store.companies.all().map((c) => ({ ...c, plan: store.companies.getPlan(c.id) })),
      );
    case 'key create': {
      const groups = o.groups
        ?.split(',')
        .map((g) => g.trim())
        .filter(Boolean) as OperationGroup[] | undefined;
      const bad = groups?.filter((g) => !OPERATION_GROUPS.includes(g));
      if (bad && bad.length > 0)
        throw new UsageError(
          `unknown group(s) ${bad.join(', ')}; known: ${OPERATION_GROUPS.join(', ')}`,
        );
      if (o.ip !== undefined && (isIP(o.ip) === 0 || isUnspecifiedAddress(o.ip)))
        throw new UsageError(
          '--ip must be the single client address the key may be used from (not 0.0.0.0 or ::); leave it out to allow any IP',
        );
      const { key, secret } = accounts.createApiKey(company(), {
        name: need('name'),
        fullAccess: !groups,
        groups,
        allowedIp: o.ip ?? null,
      });
      return print({ ...keyView(key), key: secret });
    }
    case 'key list':
      return print(store.apiKeys.list(company()).map(keyView));
    case 'key revoke':
      if (!store.apiKeys.remove(company(), need('id'))) throw new UsageError('no such key');
      return print({ revoked: o.id });
    case 'trunk create': {
      const transport = o.transport ?? 'udp';
      if (transport !== 'udp' && transport !== 'tcp' && transport !== 'tls')
        throw new UsageError('--transport must be udp, tcp or tls');
      const callerId = o['caller-id'] ?? null;
      const trunk: SipTrunk = {
        id: randomUUID(),
        companyId: company(),
        createdAt: now,
        modifiedAt: now,
        name: need('name'),
        host: need('host'),
        port: num('port'),
        transport,
        username: o.username ?? null,
        password: o.password ?? null,
        defaultCallerId: callerId,
        callerIds: callerId ? [callerId] : [],
        numberFormat: 'e164',
        techPrefix: '',
        headers: {},
        ratePerMinute: 0,
        isDefault: !!o.default,
        active: true,
        maxChannels: null,
        optionsPing: !!o['options-ping'],
      };
      // The same rule as the API: nothing unsafe reaches a SIP message.
      const unsafe = unsafeTrunkField(trunk);
      if (unsafe) {
        const flag = unsafe === 'defaultCallerId' || unsafe === 'callerIds' ? 'caller-id' : unsafe;
        throw new UsageError(
          `--${flag} is not valid in a SIP message (no CR, LF, NUL or other control characters; E.164 caller IDs)`,
        );
      }
      return print(trunkView(store.sipTrunks.insert(trunk)));
    }
    case 'trunk list':
      return print(store.sipTrunks.list(company()).map((t) => trunkView(t)));
    case 'agent create':
      return print(
        store.agents.insert({
          id: randomUUID(),
          companyId: company(),
          createdAt: now,
          modifiedAt: now,
          name: need('name'),
          websocketUrl: need('url'),
          audioFormat: 'mulaw_8000',
          prompt: o.prompt ?? '',
          welcomeMessage: '',
          language: null,
          version: 1,
          outgoing: {
            ringTimeoutSeconds: null,
            maxDurationSeconds: null,
            recordingEnabled: true,
            voicemailDetection: false,
          },
        }),
      );
    case 'agent list':
      return print(store.agents.list(company()));
    default:
      throw new UsageError(`unknown command "${positionals.join(' ')}"`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    runCli(
      process.argv.slice(2),
      () => {
        const { store } = loadConfig();
        // The daemons' database: PostgreSQL when store.url is set, else the SQLite file.
        return store.url
          ? openPgStore({
              url: store.url,
              nodeId: 'cli',
              poolMax: 1,
              timeoutMs: store.timeoutMs,
              clock: systemClock,
            })
          : createStore(cliDatabase(store.path));
      },
      (v) => console.log(typeof v === 'string' ? v : JSON.stringify(v, null, 2)),
    );
  } catch (err) {
    if (
      err instanceof UsageError ||
      err instanceof ConfigError ||
      (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(`error: ${(err as Error).message}\n\n${HELP}`);
      process.exit(2);
    }
    throw err;
  }
}
