// Schema pieces the routes share: nullable fields, path ids, paging, lists
// and the fields every company-owned document has. Plain JSON-schema
// keywords only: schema-errors.ts reads ajv's keyword and params.
import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';

/**
 * X or null, written as a type list (`{type: ['integer', 'null'], minimum: 1}`)
 * rather than `anyOf: [X, {type: 'null'}]`: the constraints then apply to X
 * alone and a refusal names the one broken ("port must be at least 1"), where
 * an anyOf's failed branches read as "must be null". Same values accepted.
 */
export function nullable<T extends TSchema & { type: string }>(
  schema: T,
): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });
}

/** One of these strings: `{type: 'string', enum}` (the type lets a number be refused as such). */
export function stringEnum<const V extends string[]>(
  values: readonly [...V],
  description?: string,
) {
  return Type.Enum(values, { type: 'string', ...(description ? { description } : {}) });
}

export const IdParams = Type.Object({ id: Type.String() });

/** Fields the gateway sets on every company-owned document (model/entities.ts OwnedDocument). */
export const OwnedDocumentFields = {
  id: Type.String(),
  companyId: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  modifiedAt: Type.String({ format: 'date-time' }),
};

/** `{items: [...]}`, the answer of the list routes. */
export const ListOf = <T extends TSchema>(item: T) => Type.Object({ items: Type.Array(item) });

export const PAGE = { min: 1, default: 1 } as const;
export const PAGE_SIZE = { min: 1, max: 500, default: 50 } as const;

/** The paging fields of a query body. */
export const PagingFields = {
  page: Type.Optional(Type.Integer({ minimum: PAGE.min, default: PAGE.default })),
  pageSize: Type.Optional(
    Type.Integer({ minimum: PAGE_SIZE.min, maximum: PAGE_SIZE.max, default: PAGE_SIZE.default }),
  ),
};

/** A query's page, its size and the rows before it (defaults as the schema states them). */
export function paging(q: { page?: number; pageSize?: number }): {
  page: number;
  pageSize: number;
  offset: number;
} {
  const page = q.page ?? PAGE.default;
  const pageSize = q.pageSize ?? PAGE_SIZE.default;
  return { page, pageSize, offset: (page - 1) * pageSize };
}

/** `{items, total, page, pageSize}`, the answer of the query routes. */
export const PageOf = <T extends TSchema>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    total: Type.Integer({ minimum: 0 }),
    page: Type.Integer({ minimum: PAGE.min }),
    pageSize: Type.Integer({ minimum: PAGE_SIZE.min }),
  });
