// [Calls]: initiate, read, query and hang up calls; opt-outs.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.js';
import { CALL_STATUSES } from '../../model/call-status.js';
import type { CallService } from '../../calls/call-service.js';
import { toE164 } from '../../calls/initiate-call-request.js';
import type { CallRecord } from '../../model/call-record.js';
import type { Store } from '../../store/store.js';
import { ApiError } from '../error-catalogue.js';
import { InitiateCallBodySchema } from '../../calls/intake/initiate-call-body.js';
import { schemaError } from '../schema-errors.js';
import { initiateCallResponses } from '../schemas/initiate-call-schema.js';

const TAG = 'Calls';
const common = { tags: [TAG], security: [{ apiKey: [] }] };
const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
const callRecord = {
  type: 'object',
  additionalProperties: true,
  description: 'The call record (spec §2.5).',
};

/** The record as the API shows it: internal routing details left out. */
export function callView(r: CallRecord): Record<string, unknown> {
  const { routing: _routing, ...rest } = r;
  return rest;
}

export function registerCallRoutes(
  app: FastifyInstance,
  calls: CallService,
  store: Store,
  clock: Clock,
): void {
  // One schema validates, documents and types the body (calls/intake/initiate-call-body.ts);
  // its failures answer one code per field (spec §7), the domain adds the rules a schema cannot say.
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/api/v1/phones/calls/initiate-call',
    {
      config: { access: 'Calls' },
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
    (request) => calls.initiate(request.auth, request.body),
  );

  app.get(
    '/api/v1/phones/calls/:id',
    {
      config: { access: 'Calls' },
      schema: { ...common, summary: 'Get a call', params: idParams, response: { 200: callRecord } },
    },
    async (request) =>
      callView(calls.get(request.auth.company.id, (request.params as { id: string }).id)),
  );

  app.post(
    '/api/v1/phones/calls/:id/hangup',
    {
      config: { access: 'Calls' },
      schema: {
        ...common,
        summary: 'Hang up a live call or drop a scheduled one',
        params: idParams,
        response: { 200: callRecord },
      },
    },
    async (request) =>
      callView(
        await calls.hangup(
          request.auth.company.id,
          (request.params as { id: string }).id,
          request.auth.key,
        ),
      ),
  );

  app.post(
    '/api/v1/phones/calls/query',
    {
      config: { access: 'Calls' },
      schema: {
        ...common,
        summary: 'List and filter calls',
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: {
            status: { type: 'array', items: { type: 'string', enum: [...CALL_STATUSES] } },
            phoneNumber: { type: 'string' },
            agentId: { type: 'string' },
            createdFrom: { type: 'string', format: 'date-time' },
            createdTo: { type: 'string', format: 'date-time' },
            page: { type: 'integer', minimum: 1, default: 1 },
            pageSize: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
          },
        },
      },
    },
    async (request) => {
      const q = (request.body ?? {}) as {
        status?: string[];
        phoneNumber?: string;
        agentId?: string;
        createdFrom?: string;
        createdTo?: string;
        page?: number;
        pageSize?: number;
      };
      const page = q.page ?? 1;
      const pageSize = q.pageSize ?? 50;
      const { items, total } = calls.query(request.auth.company.id, {
        statuses: q.status,
        phoneNumber: q.phoneNumber,
        agentId: q.agentId,
        createdFrom: q.createdFrom && new Date(q.createdFrom).toISOString(),
        createdTo: q.createdTo && new Date(q.createdTo).toISOString(),
        limit: pageSize,
        offset: (page - 1) * pageSize,
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
  app.post(
    '/api/v1/phones/opt-outs',
    {
      config: { access: 'Calls' },
      schema: {
        ...common,
        summary: 'Add an opt-out',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['phoneNumber'],
          properties: {
            phoneNumber: { type: 'string' },
            permanent: { type: 'boolean', default: true },
            blockedUntil: { type: 'string', format: 'date-time' },
            reason: { type: 'string', maxLength: 500 },
          },
        },
      },
    },
    async (request, reply) => {
      const b = request.body as {
        phoneNumber: string;
        permanent?: boolean;
        blockedUntil?: string;
        reason?: string;
      };
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
  app.get(
    '/api/v1/phones/opt-outs',
    { config: { access: 'Calls' }, schema: { ...common, summary: 'List opt-outs' } },
    async (request) => ({
      items: store.optOuts.list(request.auth.company.id),
    }),
  );
  const numberParams = {
    type: 'object',
    properties: { number: { type: 'string' } },
    required: ['number'],
  };
  app.get(
    '/api/v1/phones/opt-outs/:number',
    {
      config: { access: 'Calls' },
      schema: { ...common, summary: 'Get an opt-out', params: numberParams },
    },
    async (request) => {
      const found = store.optOuts.get(
        request.auth.company.id,
        number((request.params as { number: string }).number),
      );
      if (!found) throw new ApiError('not_found', 'This number has not opted out.');
      return found;
    },
  );
  app.delete(
    '/api/v1/phones/opt-outs/:number',
    {
      config: { access: 'Calls' },
      schema: { ...common, summary: 'Remove an opt-out', params: numberParams },
    },
    async (request, reply) => {
      if (
        !store.optOuts.remove(
          request.auth.company.id,
          number((request.params as { number: string }).number),
        )
      ) {
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
