// The API between daemons on one PostgreSQL (issue 27 rule 5): a peer that
// got a hangup or transfer for a call this node holds forwards it here.
// Authenticated by the cluster key only (no API key: the peer already
// checked the caller's), and hidden from the OpenAPI document.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CallDispatcher } from '../../calls/call-service.js';
import { CallError } from '../../calls/call-error.js';
import type { ConsultAction } from '../../calls/ports/agent-link.js';
import type { TransferBody } from '../../calls/transfer/transfer-request.js';
import { CLUSTER_KEY_HEADER } from '../../cluster/forwarding-dispatcher.js';
import type { CallRecord } from '../../model/call-record.js';
import { callView } from '../../model/call-view.js';
import { ApiError } from '../error-catalogue.js';

export interface InternalRouteDeps {
  /** The local dialer (never the forwarding one: a request is forwarded once). */
  local: Required<Pick<CallDispatcher, 'hangup' | 'transfer' | 'consult'>>;
  calls: { getById(id: string): CallRecord | undefined };
  clusterKey: string;
}

const ACTIONS: readonly ConsultAction[] = ['merge', 'cancel', 'swap'];

export function registerInternalRoutes(app: FastifyInstance, deps: InternalRouteDeps): void {
  const expected = Buffer.from(deps.clusterKey);
  const record = (request: FastifyRequest<{ Params: { id: string } }>): CallRecord => {
    const got = request.headers[CLUSTER_KEY_HEADER];
    const given = Buffer.from(typeof got === 'string' ? got : '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new ApiError('unauthorized', 'The cluster key is missing or wrong.');
    const found = deps.calls.getById(request.params.id);
    if (!found) throw new CallError('not_found', 'No call with this id.');
    return found;
  };
  const notHere = () => new CallError('call_not_live', 'The call is not live on this node.');
  const hide = { schema: { hide: true } };

  app.post<{ Params: { id: string } }>('/internal/v1/calls/:id/hangup', hide, async (request) => {
    const ended = await deps.local.hangup(record(request));
    if (!ended) throw notHere();
    return callView(ended);
  });
  app.post<{ Params: { id: string }; Body: TransferBody }>(
    '/internal/v1/calls/:id/transfer',
    hide,
    async (request) => {
      const running = deps.local.transfer(record(request), request.body);
      if (!running) throw notHere();
      return running;
    },
  );
  app.post<{ Params: { id: string; action: string } }>(
    '/internal/v1/calls/:id/transfer/:action',
    hide,
    async (request) => {
      const action = request.params.action as ConsultAction;
      if (!ACTIONS.includes(action))
        throw new CallError('no_consult_in_progress', 'No such action.');
      const running = deps.local.consult(record(request), action);
      if (!running) throw notHere();
      return running;
    },
  );
}
