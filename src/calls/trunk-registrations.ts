// Keeps the SIP engine's registrations in step with the registration trunks
// (the set changes at runtime through the API), answers "may this trunk carry
// a call?" for resolution, and logs each change of state once.
import type { SipTrunk } from '../model/entities.js';
import { tlsMaterialOf } from './invite-request.js';
import type { CallStore } from './ports/call-store.js';
import type { Timers } from './timers.js';
import type { TrunkHealthLog } from './trunk-health.js';

/** One trunk's binding as the SIP engine registers it. */
export interface RegistrationSpec {
  id: string;
  target: {
    host: string;
    port?: number;
    transport: 'udp' | 'tcp' | 'tls';
    tls?: { profile: string; ca?: string; cert?: string; key?: string };
  };
  domain: string;
  username: string;
  authUsername: string;
  password: string;
  expiresSeconds: number;
}

/** What the engine knows of one binding (times in ms since the epoch). */
export interface RegistrationStatus {
  state: 'registering' | 'registered' | 'unregistered';
  lastStatus: number | null;
  lastError: string | null;
  registeredAt: number | null;
  expiresAt: number | null;
  refreshes: number;
}

/** The SIP engine's registration client (the embedded stack's `registrations`). */
export interface RegistrationPort {
  setBindings(specs: readonly RegistrationSpec[]): void;
  snapshot(id: string): RegistrationStatus | undefined;
  on(
    event: 'registered',
    fn: (e: { id: string; expiresSeconds: number; refresh: boolean }) => void,
  ): unknown;
  on(
    event: 'unregistered',
    fn: (e: { id: string; status: number; error: string }) => void,
  ): unknown;
}

/** `health.registration` of a trunk in the API. */
export interface TrunkRegistrationView {
  state: RegistrationStatus['state'];
  lastStatus: number | null;
  lastError: string | null;
  registeredAt: string | null;
  expiresAt: string | null;
  refreshes: number;
}

/** Before the first REGISTER. */
const NOT_YET: RegistrationStatus = {
  state: 'registering',
  lastStatus: null,
  lastError: null,
  registeredAt: null,
  expiresAt: null,
  refreshes: 0,
};

/** With a SIP engine that cannot register (drachtio). */
const NO_ENGINE: RegistrationStatus = {
  ...NOT_YET,
  state: 'unregistered',
  lastError: 'registration needs the embedded SIP engine (sip.engine embedded)',
};

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export class TrunkRegistrations {
  private handle: unknown;
  /** Registration trunks at the last refresh. */
  private trunks = new Map<string, SipTrunk>();

  constructor(
    private readonly store: CallStore,
    /** Undefined: the SIP engine cannot register (drachtio); such trunks stay unregistered. */
    private readonly port: RegistrationPort | undefined,
    private readonly timers: Timers,
    private readonly refreshMs: number,
    log?: TrunkHealthLog,
  ) {
    port?.on('registered', (e) => {
      if (!e.refresh)
        log?.info({ trunkId: e.id, expiresSeconds: e.expiresSeconds }, 'SIP trunk registered');
    });
    port?.on('unregistered', (e) =>
      log?.warn(
        { trunkId: e.id, status: e.status, lastError: e.error },
        'SIP trunk registration failed',
      ),
    );
  }

  start(): void {
    this.refresh();
    this.handle = this.timers.setInterval(() => this.refresh(), this.refreshMs);
  }

  /** Picks up trunks created, changed or removed through the API. */
  refresh(): void {
    const trunks = this.store.sipTrunks.listAll().filter((t) => t.active && t.register?.enabled);
    this.trunks = new Map(trunks.map((t) => [t.id, t]));
    this.port?.setBindings(trunks.map(bindingOf));
  }

  /** A registration trunk that is not registered and whose last attempt failed. */
  isFailed(trunkId: string): boolean {
    return this.view(trunkId)?.state === 'unregistered';
  }

  /** Undefined for a trunk that does not register. */
  view(trunkId: string): TrunkRegistrationView | undefined {
    if (!this.trunks.has(trunkId)) return undefined;
    const s = this.port ? (this.port.snapshot(trunkId) ?? NOT_YET) : NO_ENGINE;
    return { ...s, registeredAt: iso(s.registeredAt), expiresAt: iso(s.expiresAt) };
  }

  stop(): void {
    if (this.handle) this.timers.clearInterval(this.handle);
  }
}

/** The registrar is the trunk's host unless `registrar` names another host[:port]. */
function bindingOf(t: SipTrunk): RegistrationSpec {
  const r = t.register!;
  const registrar = r.registrar ? splitHostPort(r.registrar) : undefined;
  const host = registrar?.host ?? t.host;
  const port = registrar ? registrar.port : (t.port ?? undefined);
  const tls = tlsMaterialOf(t);
  return {
    id: t.id,
    target: {
      host,
      ...(port !== undefined ? { port } : {}),
      transport: t.transport,
      ...(tls ? { tls } : {}),
    },
    domain: host,
    username: r.username,
    authUsername: r.authUsername ?? r.username,
    password: r.password ?? '',
    expiresSeconds: r.expiresSeconds,
  };
}

function splitHostPort(value: string): { host: string; port?: number } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value);
  if (!m) return { host: value };
  return m[2] ? { host: m[1]!, port: Number(m[2]) } : { host: m[1]! };
}
