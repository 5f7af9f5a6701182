// The daemon as the load run sees it: its process (started like the tests
// start it, `npm start` on its own SQLite), its HTTP API under one API key,
// and the plan-limited company for the overload phase (through the CLI).
import { spawn } from 'node:child_process';
import { startDaemon, type Daemon } from '../../../test/support/daemon.js';
import { CallTracker, type TrackedCall } from './call-tracker.js';

export interface Gateway {
  daemon: Daemon;
  tracker: CallTracker;
  sipPort: number;
}

export async function startGateway(env: Record<string, string>): Promise<Gateway> {
  const tracker = new CallTracker();
  const daemon = await startDaemon(env, 60_000);
  daemon.child.stdout!.on('data', (d: Buffer) => tracker.feed(d.toString()));
  tracker.feed(daemon.output() + '\n');
  const m = /"sipPort":(\d+)[^\n]*"msg":"gateway listening"/.exec(daemon.output());
  if (!m) throw new Error('no sipPort in the "gateway listening" line');
  return { daemon, tracker, sipPort: Number(m[1]) };
}

export class Tenant {
  private numbers = 0;

  constructor(
    private readonly gw: Gateway,
    readonly apiKey: string,
    readonly agentId: string,
    /** Trunk to the SIPp echo, and to the SIPp whose SDP points at the RTP probe. */
    readonly echoTrunkId: string,
    readonly probeTrunkId: string,
    /** Numbers of different tenants must not overlap (cooldowns, history). */
    private readonly numberBase: number,
  ) {}

  static async create(
    gw: Gateway,
    apiKey: string,
    agentUrl: string,
    echoSipPort: number,
    probeSipPort: number,
    numberBase: number,
  ): Promise<Tenant> {
    const post = async (path: string, body: unknown): Promise<string> => {
      const r = await gw.daemon.api('POST', path, body, { 'x-api-key': apiKey });
      if (r.status >= 300) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.json)}`);
      const json = r.json as { id?: string };
      if (!json.id) throw new Error(`${path}: no id in ${JSON.stringify(r.json)}`);
      return json.id;
    };
    const trunk = (name: string, port: number) =>
      post('/api/v1/phones/sip-trunks', {
        name,
        host: '127.0.0.1',
        port,
        callerIds: ['+12125550100'],
      });
    const echoTrunkId = await trunk('load-echo', echoSipPort);
    const probeTrunkId = await trunk('load-probe', probeSipPort);
    const agentId = await post('/api/v1/agents', {
      name: 'load-echo-agent',
      websocketUrl: agentUrl,
      outgoing: { maxDurationSeconds: 3600 },
    });
    return new Tenant(gw, apiKey, agentId, echoTrunkId, probeTrunkId, numberBase);
  }

  /** A distinct valid NANP number per call (+1 212/646/718/917 555 XXXX). */
  private nextNumber(): string {
    const n = this.numberBase + this.numbers++;
    const area = ['212', '646', '718', '917', '347', '929'][Math.floor(n / 10_000) % 6]!;
    return `+1${area}555${String(n % 10_000).padStart(4, '0')}`;
  }

  /** POST initiate-call; the call is tracked when admitted. */
  async place(probe: boolean): Promise<{ status: number; call?: TrackedCall }> {
    const placedAt = Date.now();
    const t0 = performance.now();
    let r: { status: number; json: { callId?: string } };
    try {
      r = await this.gw.daemon.api(
        'POST',
        '/api/v1/phones/calls/initiate-call',
        {
          destinationNumber: this.nextNumber(),
          agentId: this.agentId,
          sipTrunkId: probe ? this.probeTrunkId : this.echoTrunkId,
          useAntiHarassmentProtection: false,
          overrideTimeRestriction: true,
          overrideDayRestriction: true,
          maxRetries: 0,
        },
        { 'x-api-key': this.apiKey },
      );
    } catch {
      return { status: 0 };
    }
    const apiMs = performance.now() - t0;
    if (r.status >= 300 || !r.json.callId) return { status: r.status };
    const call: TrackedCall = {
      callId: r.json.callId,
      probe,
      placedAt,
      apiMs,
      httpStatus: r.status,
    };
    this.gw.tracker.add(call);
    return { status: r.status, call };
  }

  async hangup(callId: string): Promise<number> {
    try {
      const r = await this.gw.daemon.api(
        'POST',
        `/api/v1/phones/calls/${callId}/hangup`,
        undefined,
        { 'x-api-key': this.apiKey },
      );
      return r.status;
    } catch {
      return 0;
    }
  }

  async record(callId: string): Promise<Record<string, unknown> | undefined> {
    const r = await this.gw.daemon.api('GET', `/api/v1/phones/calls/${callId}`, undefined, {
      'x-api-key': this.apiKey,
    });
    return r.status === 200 ? (r.json as Record<string, unknown>) : undefined;
  }
}

/** Runs `npm run cli -- …` on the daemon's database and parses its JSON output. */
export function cli(dbPath: string, args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'cli', '--', ...args], {
      env: { ...process.env, GATEWAY_DB_PATH: dbPath, GATEWAY_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      const start = out.indexOf('{');
      try {
        if (code !== 0 || start < 0) throw new Error(`exit ${code}`);
        resolve(JSON.parse(out.slice(start)) as Record<string, unknown>);
      } catch (err) {
        reject(new Error(`cli ${args.join(' ')}: ${String(err)}\n${out}`));
      }
    });
  });
}

/** A company with a concurrent-call limit and a full-access key for it. */
export async function limitedCompanyKey(dbPath: string, concurrent: number): Promise<string> {
  const company = await cli(dbPath, [
    'company',
    'create',
    '--name',
    'load',
    '--concurrent',
    String(concurrent),
  ]);
  const key = await cli(dbPath, [
    'key',
    'create',
    '--company',
    String(company.id),
    '--name',
    'load',
  ]);
  if (typeof key.key !== 'string') throw new Error(`no key in ${JSON.stringify(key)}`);
  return key.key;
}
