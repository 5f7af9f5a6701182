// CRUD routes for a kind of company-owned configuration document (trunks,
// routes, agents, VoIP phones): create, list, read, patch, delete, each
// scoped to the requesting company (another company's id answers 404).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.js';
import type { DocumentRepository } from '../store/document-repository.js';
import type { OwnedDocument } from '../model/entities.js';
import type { RouteAccess } from './auth.js';
import { ApiError } from './error-catalogue.js';

type Fields<T> = Omit<T, keyof OwnedDocument>;
type JsonSchema = Record<string, unknown>;

export interface DocumentRoutesOptions<T extends OwnedDocument> {
  path: string;
  tag: string;
  access: RouteAccess;
  noun: string;
  repo: DocumentRepository<T>;
  clock: Clock;
  /** Properties of the object (shared by create and patch). */
  properties: Record<string, JsonSchema>;
  required: string[];
  /** Fills defaults for a create body. */
  build(input: Record<string, unknown>): Fields<T>;
  /** Referential checks before a save; throw ApiError to refuse. */
  check?(doc: T): void;
  /** Side effects after a save (e.g. only one default trunk). */
  afterSave?(doc: T): void;
  /** A patched document before it is saved (e.g. bump a version). */
  onPatch?(prev: T, next: T): T;
  /** Refuses a delete while something refers to the document. */
  beforeDelete?(doc: T): void;
  /** The document as the API shows it (hide secrets). */
  view?(doc: T): Record<string, unknown>;
}

export function registerDocumentRoutes<T extends OwnedDocument>(
  app: FastifyInstance,
  o: DocumentRoutesOptions<T>,
): void {
  const view = o.view ?? ((d: T) => d as unknown as Record<string, unknown>);
  const iso = () => new Date(o.clock.now()).toISOString();
  const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
  const common = { tags: [o.tag], security: [{ apiKey: [] }] };
  const find = (companyId: string, id: string): T => {
    const doc = o.repo.get(companyId, id);
    if (!doc) throw new ApiError('not_found', `No ${o.noun} with this id in this company.`);
    return doc;
  };

  app.post(
    o.path,
    {
      config: { access: o.access },
      schema: {
        ...common,
        summary: `Create a ${o.noun}`,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: o.properties,
          required: o.required,
        },
      },
    },
    async (request, reply) => {
      const now = iso();
      const doc = {
        ...o.build(request.body as Record<string, unknown>),
        id: randomUUID(),
        companyId: request.auth.company.id,
        createdAt: now,
        modifiedAt: now,
      } as T;
      o.check?.(doc);
      o.repo.insert(doc);
      o.afterSave?.(doc);
      return reply.code(201).send(view(doc));
    },
  );

  app.get(
    o.path,
    { config: { access: o.access }, schema: { ...common, summary: `List ${o.noun}s` } },
    async (request) => ({
      items: o.repo.list(request.auth.company.id).map(view),
    }),
  );

  app.get(
    `${o.path}/:id`,
    {
      config: { access: o.access },
      schema: { ...common, summary: `Get a ${o.noun}`, params: idParams },
    },
    async (request) => view(find(request.auth.company.id, (request.params as { id: string }).id)),
  );

  app.patch(
    `${o.path}/:id`,
    {
      config: { access: o.access },
      schema: {
        ...common,
        summary: `Change a ${o.noun}`,
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: o.properties,
          minProperties: 1,
        },
      },
    },
    async (request) => {
      const prev = find(request.auth.company.id, (request.params as { id: string }).id);
      let next = {
        ...prev,
        ...(request.body as Partial<T>),
        id: prev.id,
        companyId: prev.companyId,
        createdAt: prev.createdAt,
        modifiedAt: iso(),
      } as T;
      if (o.onPatch) next = o.onPatch(prev, next);
      o.check?.(next);
      o.repo.update(next);
      o.afterSave?.(next);
      return view(next);
    },
  );

  app.delete(
    `${o.path}/:id`,
    {
      config: { access: o.access },
      schema: { ...common, summary: `Delete a ${o.noun}`, params: idParams },
    },
    async (request, reply) => {
      const doc = find(request.auth.company.id, (request.params as { id: string }).id);
      o.beforeDelete?.(doc);
      o.repo.remove(doc.companyId, doc.id);
      return reply.code(204).send();
    },
  );
}
