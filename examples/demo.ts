/**
 * One whole outbound call on this machine, in about ten seconds:
 *
 *   npm run demo
 *
 * starts SIPp as the phone (`sipp -sn uas`: answers, echoes RTP), the example
 * echo agent (examples/echo-agent.ts) and the daemon (`tsx src/main.ts` on a
 * throw-away SQLite file, HTTP and SIP on free loopback ports, a bootstrap
 * API key); creates a SIP trunk and an agent through the HTTP API; places a
 * call with the time and day overrides (so it works at any hour); prints the
 * call's status as it changes; hangs up after a few seconds in the call;
 * prints the final call record; stops everything it started.
 *
 *   DEMO_URL=http://127.0.0.1:3000 DEMO_API_KEY=change-me npm run demo
 *
 * uses a daemon that is already running on this machine instead (it must
 * reach SIPp and the agent on 127.0.0.1); the trunk and agent the demo
 * creates there are deleted at the end.
 *
 * Exit code 0 when the call was answered and its record is final; 1 when it
 * was not answered, something failed, or 60 s passed (everything started is
 * stopped first). Nothing of the daemon's log is printed unless it fails;
 * the numbers are the fictional ones below.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isFinal } from '../src/model/call-status.js';
import { ApiCallError, GatewayClient, type Json } from './demo/gateway-client.js';
import { sleep, startDaemon, startEchoAgent, startFarEnd } from './demo/local-stack.js';
import type { DemoProcess } from './demo/processes.js';

const TIMEOUT_SECONDS = 60;
const IN_CALL_SECONDS = 3;
/** Fictional numbers (NANP 555-0100 to 555-0199). */
const DESTINATION = '+14155550123';
const CALLER_ID = '+12125550100';

const repoDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
let finishing = false;
const write = (line = ''): void => void process.stdout.write(`${line}\n`);
/** The walk-through's output: silent once the demo is being stopped (timeout, Ctrl-C, error). */
const say = (line = ''): void => {
  if (!finishing) write(line);
};
const compact = (v: unknown): string => JSON.stringify(v);

const STATUS_NOTES: Record<string, string> = {
  to_be_processed: 'accepted, about to be dialed',
  trying: 'INVITE sent to the trunk',
  ringing: 'the phone rings (180)',
  session_progress: 'early media (183)',
  in_call: 'answered (200 OK): audio flows SIPp <-> daemon <-> echo agent',
  answered: 'final: the call was answered and has ended',
};

// Everything the demo started or created, undone in reverse order at the end.
const processes: DemoProcess[] = [];
const undo: { what: string; run: () => Promise<unknown> }[] = [];
let workDir: string | undefined;
let liveCall: { client: GatewayClient; callId: string } | undefined;

async function main(): Promise<number> {
  const externalUrl = process.env.DEMO_URL?.replace(/\/+$/, '');
  const externalKey = process.env.DEMO_API_KEY;
  if (externalUrl && !externalKey) {
    throw new Error('DEMO_URL is set but DEMO_API_KEY is not: give the API key of that daemon.');
  }
  workDir = mkdtempSync(join(tmpdir(), 'gateway-demo-'));

  say('Outbound call gateway demo: one call from the HTTP API to a SIP phone and back.');
  say();
  say('Starting:');
  const farEnd = await startFarEnd(workDir, TIMEOUT_SECONDS + 30);
  processes.push(farEnd.proc);
  say(`  phone    SIPp UAS (sipp -sn uas -rtp_echo) on udp ${farEnd.host}:${farEnd.port}`);

  const daemonKey = externalKey ?? `demo-${randomBytes(16).toString('hex')}`;
  const [agent, daemon] = await Promise.all([
    startEchoAgent(repoDir, workDir).then((a) => (processes.push(a.proc), a)),
    externalUrl
      ? Promise.resolve(undefined)
      : startDaemon(repoDir, workDir, daemonKey).then((d) => (processes.push(d.proc), d)),
  ]);
  say(`  agent    examples/echo-agent.ts on ${agent.url}`);
  const client = new GatewayClient(externalUrl ?? daemon?.baseUrl ?? '', daemonKey);
  if (daemon) {
    say(
      `  daemon   tsx src/main.ts on ${daemon.baseUrl} (SIP udp 127.0.0.1:${daemon.sipPort}, ` +
        `SQLite ${daemon.dbPath}, a throw-away bootstrap API key)`,
    );
  } else {
    say(`  daemon   already running at ${client.baseUrl} (DEMO_URL)`);
  }
  for (let i = 0; !(await client.ready()); i++) {
    if (i >= 50) throw new Error(`the daemon at ${client.baseUrl} is not ready (GET /readyz)`);
    await sleep(200);
  }
  say();

  // 1. The SIP trunk: where calls go out. Here SIPp; for a carrier see the end.
  const trunkBody = {
    name: 'demo-sipp',
    host: farEnd.host,
    port: farEnd.port,
    transport: 'udp',
    callerIds: [CALLER_ID],
    defaultCallerId: CALLER_ID,
  };
  say(`POST /api/v1/phones/sip-trunks ${compact(trunkBody)}`);
  const trunk = await client.request('POST', '/api/v1/phones/sip-trunks', trunkBody);
  say(`  -> 201 trunk ${String(trunk.id)}`);
  if (externalUrl)
    undo.push(deleting(client, 'sip-trunk', `/api/v1/phones/sip-trunks/${String(trunk.id)}`));

  // 2. The agent: the WebSocket the call's audio is bridged to.
  const agentBody = { name: 'demo-echo', websocketUrl: agent.url };
  say(`POST /api/v1/agents ${compact(agentBody)}`);
  const agentRecord = await client.request('POST', '/api/v1/agents', agentBody);
  say(`  -> 201 agent ${String(agentRecord.id)}`);
  if (externalUrl) undo.push(deleting(client, 'agent', `/api/v1/agents/${String(agentRecord.id)}`));

  // 3. The call. The overrides skip the 09:00-21:00 and weekday/holiday rules of
  // the destination, so the demo dials at any hour.
  const callBody: Json = {
    destinationNumber: DESTINATION,
    agentId: agentRecord.id,
    sipTrunkId: trunk.id,
    overrideTimeRestriction: true,
    overrideDayRestriction: true,
    maxRetries: 1, // one attempt in all (spec §8): a call SIPp does not answer ends, no retry
  };
  // A daemon of yours keeps its call history: its anti-harassment limits (one
  // hour between answered calls to a number) would refuse a second demo run.
  // The demo calls its own SIPp, not a person.
  if (externalUrl) callBody.useAntiHarassmentProtection = false;
  say(`POST /api/v1/phones/calls/initiate-call ${compact(callBody)}`);
  const initiated = await client.request('POST', '/api/v1/phones/calls/initiate-call', callBody);
  say(`  -> 200 ${compact(initiated)}`);
  if (initiated.scheduled === true) {
    throw new Error(`the daemon scheduled the call instead of dialing it: ${compact(initiated)}`);
  }
  const callId = String(initiated.callId);
  liveCall = { client, callId };
  say();

  // 4. The live status, until the record is final; hang up after a few seconds in the call.
  const recordPath = `/api/v1/phones/calls/${callId}`;
  say(`Live status (GET ${recordPath} every 200 ms):`);
  const t0 = Date.now();
  const at = (): string => `${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s`;
  let last = '';
  let inCallSince: number | undefined;
  let hungUp = false;
  let record: Json;
  for (;;) {
    record = await client.request('GET', recordPath);
    const status = String(record.status);
    if (status !== last) {
      say(`  ${at()}  ${status.padEnd(16)} ${STATUS_NOTES[status] ?? ''}`.trimEnd());
      last = status;
    }
    if (status === 'in_call') inCallSince ??= Date.now();
    if (isFinal(status) || status === 'scheduled') break; // scheduled: dialed, a retry is due
    if (
      inCallSince !== undefined &&
      !hungUp &&
      Date.now() - inCallSince >= IN_CALL_SECONDS * 1000
    ) {
      say(`  ${at()}  POST ${recordPath}/hangup`);
      await client.request('POST', `${recordPath}/hangup`);
      hungUp = true;
      continue;
    }
    await sleep(200);
  }
  liveCall = undefined;
  say();

  say(`Final record (GET ${recordPath}):`);
  say(JSON.stringify(record, null, 2));
  say();

  const answered = inCallSince !== undefined || typeof record.startAt === 'string';
  if (!answered) {
    say(
      `The call was NOT answered: status ${String(record.status)}, endCallReason ` +
        `${String(record.endCallReason)}${record.sipFailure ? `, sipFailure ${compact(record.sipFailure)}` : ''}.`,
    );
    return 1;
  }
  const quality = (record.networkQuality ?? {}) as Json;
  say(
    `The call was answered${hungUp ? ' and hung up through the API' : ''}: status ` +
      `${String(record.status)}, endCallReason ${String(record.endCallReason)}, duration ` +
      `${String(record.duration)} s, ${String(quality.packetsReceived ?? 0)} RTP packets received ` +
      `(${String(quality.packetsLost ?? 0)} lost).`,
  );
  say();
  printRealCarrierHelp();
  return 0;
}

function deleting(
  client: GatewayClient,
  what: string,
  path: string,
): { what: string; run: () => Promise<unknown> } {
  return { what: `the demo's ${what}`, run: () => client.request('DELETE', path) };
}

function printRealCarrierHelp(): void {
  for (const line of [
    'To call through a real carrier instead of SIPp:',
    '  trunk   POST /api/v1/phones/sip-trunks with your carrier\'s "host" (its SIP domain or proxy),',
    '          "port" (null or left out: found by DNS SRV, else 5060), "transport" ("udp" or "tcp"),',
    '          "username" and "password" (its digest credentials, if it asks for them),',
    '          "callerIds" / "defaultCallerId" (numbers it lets you present, E.164), and',
    '          "isDefault": true or a "sipTrunkId" in each call (docs/api.md: trunk resolution).',
    '  agent   "websocketUrl" of your own agent (wss://...), speaking docs/agent-protocol.md',
    '          (Twilio Media Streams framing by default).',
    '  daemon  SIP and RTP listen on 127.0.0.1 by default: set GATEWAY_SIP_HOST / GATEWAY_RTP_HOST',
    '          to an address the carrier reaches (and GATEWAY_SIP_ADVERTISED_HOST /',
    '          GATEWAY_RTP_ADVERTISED_IP behind NAT); README "Configuration".',
    '  call    a real "destinationNumber"; without the override flags the 09:00-21:00 and',
    '          weekday/holiday rules of the destination apply (the call may be scheduled).',
  ])
    say(line);
}

/** Ends the demo once: hangs up a live call, undoes what it created, stops what it started. */
async function finish(code: number, message?: string): Promise<void> {
  if (finishing) return;
  finishing = true;
  clearTimeout(deadline);
  if (message) {
    write();
    write(`${code > 128 ? 'demo stopped' : 'demo failed'}: ${message}`);
  }
  if (liveCall) {
    await liveCall.client
      .request('POST', `/api/v1/phones/calls/${liveCall.callId}/hangup`)
      .catch(() => undefined);
  }
  for (const step of undo.reverse()) {
    await step.run().catch((err: Error) => write(`could not delete ${step.what}: ${err.message}`));
  }
  for (const p of [...processes].reverse()) {
    if (code !== 0 && p.name === 'daemon' && p.hasExited()) {
      write(`the daemon exited early; its last lines:\n${p.tail()}`);
    }
    await p.stop();
  }
  if (processes.length) write(`Stopped ${processes.map((p) => p.name).join(', ')}.`);
  if (workDir) {
    if (code === 0 || !processes.length) rmSync(workDir, { recursive: true, force: true });
    else write(`Logs of SIPp, the echo agent and the daemon: ${workDir}`);
  }
  process.exit(code);
}

const deadline = setTimeout(
  () => void finish(1, `it did not finish within ${TIMEOUT_SECONDS} s`),
  TIMEOUT_SECONDS * 1000,
);
process.on('SIGINT', () => void finish(130, 'interrupted'));
process.on('SIGTERM', () => void finish(143, 'terminated'));

main().then(
  (code) => finish(code),
  (err: unknown) =>
    finish(
      1,
      err instanceof ApiCallError
        ? `the daemon refused ${err.method} ${err.path} with ${err.status}: ${compact(err.body)}`
        : err instanceof Error
          ? err.message
          : String(err),
    ),
);
