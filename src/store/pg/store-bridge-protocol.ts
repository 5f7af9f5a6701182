// The messages between the main thread and the PostgreSQL store's worker
// (store-bridge.ts, store-worker.ts).
import type { MessagePort } from 'node:worker_threads';
import type { PgRepositories } from './pg-repositories.js';

export interface StoreWorkerData {
  url: string;
  nodeId: string;
  poolMax: number;
  statementTimeoutMs: number;
  port: MessagePort;
  /** An Int32Array's SharedArrayBuffer: the worker sets [0] to 1 when a reply is on the port. */
  signal: SharedArrayBuffer;
  /** ConfigGenerations' buffer: the worker bumps it as changes are announced. */
  generations: SharedArrayBuffer;
  /** The TypeScript entry, when booted through tsx. */
  entry?: string;
}

/** `tx`: the transaction a request belongs to (none: outside any). */
export type BridgeRequest = { id: number; tx?: number } & (
  | { op: 'migrate' }
  | { op: 'call'; repo: keyof PgRepositories | 'nodes'; method: string; args: unknown[] }
  | { op: 'begin'; keys: readonly string[] }
  | { op: 'lock'; keys: readonly string[] }
  | { op: 'savepoint' | 'release' | 'rollbackTo'; name: string }
  | { op: 'commit' | 'rollback' }
  | { op: 'close' }
);

export type BridgeReply =
  | { id: number; ok: true; value: unknown; webhookWritten: boolean }
  | {
      id: number;
      ok: false;
      error: { name: string; message: string; code: string | undefined };
      webhookWritten: false;
    };
