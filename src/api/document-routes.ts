// CRUD routes for a kind of company-owned configuration document (trunks,
// routes, agents, VoIP phones): create, list, read, patch, delete, each
// scoped to the requesting company (another company's id answers 404).
// One set of TypeBox properties validates, documents and types both bodies:
// create takes the required fields and any others (build fills defaults),
// PATCH any non-empty subset; unknown fields are refused on both.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifySchema } from 'fastify';
import {
  Type,
  type Static,
  type TObject,
  type TOptional,
  type TProperties,
  type TSchema,
} from 'typebox';
import type { Clock } from '../clock.js';
import type { DocumentRepository } from '../store/document-repository.js';
import type { RepositoryOf } from '../store/store.js';
import type { OwnedDocument } from '../model/entities.js';
import type { RouteAccess } from './auth.js';
import { ApiError } from './error-catalogue.js';
import { IdParams, ListOf } from './schemas/shared.js';

type IdParams = Static<typeof IdParams>;

type Fields<T> = Omit<T, keyof OwnedDocument>;

/** The create body's properties: those named in `required` as they are, the others optional. */
type CreateProperties<P extends TProperties, R extends keyof P> = {
  [K in keyof P]: K extends R ? P[K] : TOptional<P[K]>;
};
export type CreateBody<P extends TProperties, R extends keyof P> = Static<
  TObject<CreateProperties<P, R>>
>;
export type PatchBody<P extends TProperties> = Static<TObject<{ [K in keyof P]: TOptional<P[K]> }>>;

export interface DocumentRoutesOptions<
  T extends OwnedDocument,
  P extends TProperties,
  R extends keyof P & string,
  V extends TSchema,
> {
  path: string;
  tag: string;
  access: RouteAccess;
  noun: string;
  repo: RepositoryOf<DocumentRepository<T>>;
  clock: Clock;
  /** The fields a client may send (shared by create and patch); no defaults here, build has them. */
  properties: P;
  /** Fields a create body must have. */
  required: readonly R[];
  /** The document's fields from a create body, defaults filled. */
  build(input: CreateBody<P, R>): Fields<T>;
  /** Referential checks before a save; throw ApiError to refuse. */
  check?(doc: T): void;
  /** Side effects after a save (e.g. only one default trunk). */
  afterSave?(doc: T): void;
  /** A patched document before it is saved (e.g. bump a version, merge a nested object). */
  onPatch?(prev: T, next: T): T;
  /** Refuses a delete while something refers to the document. */
  beforeDelete?(doc: T): void;
  /**
   * The document as the API answers it, every field listed: fastify's
   * serializer drops what the schema does not name (which is how secrets stay out).
   */
  response: V;
  /** The document as `response` describes it (hide secrets, add derived fields). */
  view(doc: T): Static<V>;
}

export function registerDocumentRoutes<
  T extends OwnedDocument,
  P extends TProperties,
  R extends keyof P & string,
  V extends TSchema,
>(app: FastifyInstance, o: DocumentRoutesOptions<T, P, R, V>): void {
  const iso = () => new Date(o.clock.now()).toISOString();
  // Typed as FastifySchema: over a generic V, fastify's reply types cannot be resolved.
  /** "an agent", "an outbound route", "a SIP trunk" (OpenAPI summaries). */
  const aNoun = `${/^[aeiou]/i.test(o.noun) ? 'an' : 'a'} ${o.noun}`;
  const schema = (summary: string, parts: FastifySchema): FastifySchema => ({
    tags: [o.tag],
    security: [{ apiKey: [] }],
    summary,
    ...parts,
  });
  const required: readonly string[] = o.required;
  const createBody = Type.Object(
    Object.fromEntries(
      Object.entries(o.properties).map(([k, s]) => [
        k,
        required.includes(k) ? s : Type.Optional(s),
      ]),
    ) as CreateProperties<P, R>,
    { additionalProperties: false },
  );
  const patchBody = Type.Partial(Type.Object(o.properties), {
    additionalProperties: false,
    minProperties: 1,
  });
  const find = (companyId: string, id: string): T => {
    const doc = o.repo.get(companyId, id);
    if (!doc) throw new ApiError('not_found', `No ${o.noun} with this id in this company.`);
    return doc;
  };

  // P is generic here: TypeScript cannot evaluate Static<> over it, nor can
  // fastify's route types, so each body is read as the type its schema gives
  // (CreateBody, PatchBody); each caller's build and view are checked against
  // its concrete schemas.
  app.post(
    o.path,
    {
      config: { access: o.access },
      schema: schema(`Create ${aNoun}`, { body: createBody, response: { 201: o.response } }),
    },
    async (request, reply) => {
      const now = iso();
      const doc = {
        ...o.build(request.body as CreateBody<P, R>),
        id: randomUUID(),
        companyId: request.auth.company.id,
        createdAt: now,
        modifiedAt: now,
      } as T;
      o.check?.(doc);
      o.repo.insert(doc);
      o.afterSave?.(doc);
      return reply.code(201).send(o.view(doc));
    },
  );

  app.get(
    o.path,
    {
      config: { access: o.access },
      schema: schema(`List ${o.noun}s`, { response: { 200: ListOf(o.response) } }),
    },
    async (request) => ({
      items: o.repo.list(request.auth.company.id).map(o.view),
    }),
  );

  app.get<{ Params: IdParams }>(
    `${o.path}/:id`,
    {
      config: { access: o.access },
      schema: schema(`Get ${aNoun}`, { params: IdParams, response: { 200: o.response } }),
    },
    async (request) => o.view(find(request.auth.company.id, request.params.id)),
  );

  app.patch<{ Params: IdParams }>(
    `${o.path}/:id`,
    {
      config: { access: o.access },
      schema: schema(`Change ${aNoun}`, {
        params: IdParams,
        body: patchBody,
        response: { 200: o.response },
      }),
    },
    async (request) => {
      const prev = find(request.auth.company.id, request.params.id);
      let next = {
        ...prev,
        ...(request.body as PatchBody<P>),
        id: prev.id,
        companyId: prev.companyId,
        createdAt: prev.createdAt,
        modifiedAt: iso(),
      } as T;
      if (o.onPatch) next = o.onPatch(prev, next);
      o.check?.(next);
      o.repo.update(next);
      o.afterSave?.(next);
      return o.view(next);
    },
  );

  app.delete<{ Params: IdParams }>(
    `${o.path}/:id`,
    {
      config: { access: o.access },
      schema: schema(`Delete ${aNoun}`, { params: IdParams }),
    },
    async (request, reply) => {
      const doc = find(request.auth.company.id, request.params.id);
      o.beforeDelete?.(doc);
      o.repo.remove(doc.companyId, doc.id);
      return reply.code(204).send();
    },
  );
}
