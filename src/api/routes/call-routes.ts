// [Calls]: initiate, read, query and hang up calls; opt-outs.
import { callView } from '../../model/call-view.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../../clock.js';
import { CALL_STATUSES } from '../../model/call-status.js';
import type { CallService } from '../../calls/call-service.js';
import { toE164 } from '../../calls/initiate-call-request.js';
import type { Store } from '../../store/store.js';
import { ApiError } from '../error-catalogue.js';
import { InitiateCallBodySchema } from '../../calls/intake/initiate-call-body.js';
import { TransferBodySchema } from '../../calls/transfer/transfer-request.js';
import { inFlightCap, type LoadSheddingConfig } from '../load-shedding.js';
import { schemaError } from '../schema-errors.js';
import { initiateCallResponses } from '../schemas/initiate-call-schema.js';
import {
  IdParams,
  ListOf,
  nullable,
  PageOf,
  PagingFields,
  paging,
  stringEnum,
} from '../schemas/shared.js';

const TAG = 'Calls';
const common = { tags: [TAG], security: [{ apiKey: [] }] };
const CallRecordSchema = Type.Object(
  {},
  { additionalProperties: true, description: 'The call record (spec §2.5).' },
);

const CallQueryBody = nullable(
  Type.Object(
    {
      status: Type.Optional(Type.Array(stringEnum(CALL_STATUSES))),
      phoneNumber: Type.Optional(Type.String()),
      agentId: Type.Optional(Type.String()),
      createdFrom: Type.Optional(Type.String({ format: 'date-time' })),
      createdTo: Type.Optional(Type.String({ format: 'date-time' })),
      ...PagingFields,
    },
    { additionalProperties: false },
  ),
);

const OptOutBody = Type.Object(
  {
    phoneNumber: Type.String({ description: 'E.164.', example: '+14155550123' }),
    permanent: Type.Optional(
      Type.Boolean({ default: true, description: 'false when blockedUntil is given.' }),
    ),
    blockedUntil: Type.Optional(Type.String({ format: 'date-time' })),
    reason: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
const OptOutSchema = Type.Object({
  companyId: Type.String(),
  phoneNumber: Type.String(),
  permanent: Type.Boolean(),
  blockedUntil: nullable(Type.String({ format: 'date-time' })),
  reason: nullable(Type.String()),
  source: nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
});
const TransferResultSchema = Type.Object({
  callId: Type.String(),
  transferringStatus: stringEnum(
    ['pending_confirmation', 'success', 'failed', 'aborted'] as const,
    'pending_confirmation: a warm or attended consult reached the target (merge or cancel next).',
  ),
  transferMode: stringEnum(['blind', 'warm', 'attended'] as const),
  destination: Type.String(),
  transferFailedReason: Type.Optional(
    Type.String({
      description:
        'refer_refused, transfer_failed, no_notify, bridge_failed, consult_failed, target_hung_up, cancelled, call_ended, not_supported, …',
    }),
  ),
  sipStatus: Type.Optional(Type.Integer()),
  sipReason: Type.Optional(Type.String()),
  referTo: Type.Optional(Type.String()),
  via: Type.Optional(stringEnum(['refer', 'bridge'] as const)),
  consultPhase: Type.Optional(
    stringEnum([
      'idle',
      'consulting_ringing',
      'consulting_dest',
      'back_with_caller',
      'merged',
      'cancelled',
    ] as const),
  ),
});
const ConsultActionParams = Type.Object({
  id: Type.String(),
  action: stringEnum(['merge', 'cancel', 'swap'] as const),
});
const NumberParams = Type.Object({ number: Type.String({ description: 'E.164.' }) });

export function registerCallRoutes(
  app: FastifyInstance,
  calls: CallService,
  store: Store,
  clock: Clock,
  shedding: LoadSheddingConfig,
): void {
  const callRequests = inFlightCap(shedding);
  // One schema validates, documents and types the body (calls/intake/initiate-call-body.ts);
  // its failures answer one code per field (spec §7), the domain adds the rules a schema cannot say.
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/api/v1/phones/calls/initiate-call',
    {
      config: { access: 'Calls' },
      // A burst beyond what can be handled now is refused at once (503), not queued.
      onRequest: callRequests.onRequest,
      onResponse: callRequests.onResponse,
      schema: {
        ...common,
        summary: 'Initiate an outbound call',
        body: InitiateCallBodySchema,
        response: initiateCallResponses,
      },
      schemaErrorFormatter: (errors, dataVar) => schemaError(errors, dataVar, { fieldCodes: true }),
      // A field sent as null is a field left out (its default applies).
      preValidation: async (request) => {
        request.body = withoutNulls(request.body);
      },
    },
    (request) => calls.initiate(request.auth, request.body, () => callRequests.release(request)),
  );

  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  api.get(
    '/api/v1/phones/calls/:id',
    {
      config: { access: 'Calls' },
      schema: {
        ...common,
        summary: 'Get a call',
        params: IdParams,
        response: { 200: CallRecordSchema },
      },
    },
    async (request) => callView(calls.get(request.auth.company.id, request.params.id)),
  );

  api.post(
    '/api/v1/phones/calls/:id/hangup',
    {
      config: { access: 'Calls' },
      schema: {
        ...common,
        summary: 'Hang up a live call or drop a scheduled one',
        params: IdParams,
        response: { 200: CallRecordSchema },
      },
    },
    async (request) =>
      callView(await calls.hangup(request.auth.company.id, request.params.id, request.auth.key)),
  );

  api.post(
    '/api/v1/phones/calls/:id/transfer',
    {
      config: { access: 'Calls' },
      schema: {
        ...common,
        summary:
          'Transfer a connected call (blind by SIP REFER; warm or attended by a consult leg)',
        description:
          'blind: answers once the far end has reported the outcome (bounded by secondsToWaitForCallerToAnswer, else 32 s); success: the call ends transferred / call_transferred; failed: the call stays up with its agent. warm / attended: the callee is held and the destination dialed; answers pending_confirmation once it answered (the agent talks to it; merge or cancel next: POST …/transfer/merge or …/transfer/cancel), or failed (the agent is back with the callee).',
        params: IdParams,
        body: TransferBodySchema,
        response: { 200: TransferResultSchema },
      },
    },
    async (request) => ({
      callId: request.params.id,
      ...(await calls.transfer(request.auth.company.id, request.params.id, request.body)),
    }),
  );

  api.post(
    '/api/v1/phones/calls/:id/transfer/:action',
    {
      config: { access: 'Calls' },
      schema: {
        ...common,
        summary: 'Merge, cancel or swap the warm or attended transfer under way',
        description:
          'merge: the callee and the target hear each other, the agent leaves (success; the call ends transferred when either hangs up). cancel: the target is hung up, the agent is back with the callee (aborted / cancelled). swap: the agent talks to the other party (consultPhase back_with_caller ⇄ consulting_dest). 409 no_consult_in_progress when there is no consult in a phase that allows it.',
        params: ConsultActionParams,
        response: { 200: TransferResultSchema },
      },
    },
    async (request) => ({
      callId: request.params.id,
      ...(await calls.consult(request.auth.company.id, request.params.id, request.params.action)),
    }),
  );

  api.post(
    '/api/v1/phones/calls/query',
    {
      config: { access: 'Calls' },
      schema: {
        ...common,
        summary: 'List and filter calls',
        body: CallQueryBody,
        response: { 200: PageOf(CallRecordSchema) },
      },
    },
    async (request) => {
      const q = request.body ?? {};
      const { page, pageSize, offset } = paging(q);
      const { items, total } = calls.query(request.auth.company.id, {
        statuses: q.status,
        phoneNumber: q.phoneNumber,
        agentId: q.agentId,
        createdFrom: q.createdFrom && new Date(q.createdFrom).toISOString(),
        createdTo: q.createdTo && new Date(q.createdTo).toISOString(),
        limit: pageSize,
        offset,
      });
      return { items: items.map(callView), total, page, pageSize };
    },
  );

  // Opt-outs: numbers that asked not to be called (spec §7 callee_opted_out).
  const number = (text: string): string => {
    const e164 = toE164(text);
    if (!e164)
      throw new ApiError('invalid_destination_number', 'The number must be in E.164 format.');
    return e164;
  };
  api.post(
    '/api/v1/phones/opt-outs',
    {
      config: { access: 'Calls' },
      schema: {
        ...common,
        summary: 'Add an opt-out',
        body: OptOutBody,
        response: { 201: OptOutSchema },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const permanent = b.blockedUntil ? false : (b.permanent ?? true);
      const saved = store.optOuts.save({
        companyId: request.auth.company.id,
        phoneNumber: number(b.phoneNumber),
        permanent,
        blockedUntil: b.blockedUntil ? new Date(b.blockedUntil).toISOString() : null,
        reason: b.reason ?? null,
        source: 'api',
        createdAt: new Date(clock.now()).toISOString(),
      });
      return reply.code(201).send(saved);
    },
  );
  api.get(
    '/api/v1/phones/opt-outs',
    {
      config: { access: 'Calls' },
      schema: { ...common, summary: 'List opt-outs', response: { 200: ListOf(OptOutSchema) } },
    },
    async (request) => ({
      items: store.optOuts.list(request.auth.company.id),
    }),
  );
  api.get(
    '/api/v1/phones/opt-outs/:number',
    {
      config: { access: 'Calls' },
      schema: {
        ...common,
        summary: 'Get an opt-out',
        params: NumberParams,
        response: { 200: OptOutSchema },
      },
    },
    async (request) => {
      const found = store.optOuts.get(request.auth.company.id, number(request.params.number));
      if (!found) throw new ApiError('not_found', 'This number has not opted out.');
      return found;
    },
  );
  api.delete(
    '/api/v1/phones/opt-outs/:number',
    {
      config: { access: 'Calls' },
      schema: { ...common, summary: 'Remove an opt-out', params: NumberParams },
    },
    async (request, reply) => {
      if (!store.optOuts.remove(request.auth.company.id, number(request.params.number))) {
        throw new ApiError('not_found', 'This number has not opted out.');
      }
      return reply.code(204).send();
    },
  );
}

/** A copy of a JSON object without its null-valued fields; anything else as it is. */
function withoutNulls<T>(body: T): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null)) as T;
}
