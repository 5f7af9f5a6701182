// Company-owned configuration documents (trunks, agents, routes, VoIP
// phones) on PostgreSQL (issue 27): the SQLite repository's contract,
// asynchronous. One table of jsonb documents; each kind gets a typed
// repository. jsonb keeps the values, not the key order of the stored text.
import type { OwnedDocument } from '../../model/entities.js';
import type { Queryable } from './pg-schedule-repository.js';
import { jsonb } from './jsonb.js';

interface Row {
  id: string;
  company_id: string;
  data: object;
  created_at: string;
  modified_at: string;
}

/** DocumentRepository (SQLite) in its asynchronous form, on a pool or a transaction's client. */
export class PgDocumentRepository<T extends OwnedDocument> {
  constructor(
    private readonly db: Queryable,
    private readonly kind: string,
  ) {}

  async insert(doc: T): Promise<T> {
    const { id, companyId, createdAt, modifiedAt, ...data } = doc;
    await this.db.query(
      `INSERT INTO documents (kind, id, company_id, data, created_at, modified_at)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6)`,
      [this.kind, id, companyId, jsonb(data), createdAt, modifiedAt],
    );
    return doc;
  }

  /** The document when it exists and belongs to the company. */
  async get(companyId: string, id: string): Promise<T | undefined> {
    const { rows } = await this.db.query<Row>(
      'SELECT * FROM documents WHERE kind = $1 AND id = $2 AND company_id = $3',
      [this.kind, id, companyId],
    );
    return rows[0] && this.fromRow(rows[0]);
  }

  /** Regardless of owner: only for internal wiring (never for API reads). */
  async getById(id: string): Promise<T | undefined> {
    const { rows } = await this.db.query<Row>(
      'SELECT * FROM documents WHERE kind = $1 AND id = $2',
      [this.kind, id],
    );
    return rows[0] && this.fromRow(rows[0]);
  }

  async list(companyId: string): Promise<T[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT * FROM documents WHERE kind = $1 AND company_id = $2
       ORDER BY created_at COLLATE "C", id COLLATE "C"`,
      [this.kind, companyId],
    );
    return rows.map((r) => this.fromRow(r));
  }

  /** Every company's documents of this kind: only for internal wiring (the trunk monitor). */
  async listAll(): Promise<T[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT * FROM documents WHERE kind = $1 ORDER BY created_at COLLATE "C", id COLLATE "C"`,
      [this.kind],
    );
    return rows.map((r) => this.fromRow(r));
  }

  /** Replaces the data and modifiedAt; createdAt and the owner stay. A missing document is left missing. */
  async update(doc: T): Promise<T> {
    const { id, companyId, createdAt: _c, modifiedAt, ...data } = doc;
    await this.db.query(
      `UPDATE documents SET data = $1::jsonb, modified_at = $2
       WHERE kind = $3 AND id = $4 AND company_id = $5`,
      [jsonb(data), modifiedAt, this.kind, id, companyId],
    );
    return doc;
  }

  async remove(companyId: string, id: string): Promise<boolean> {
    const r = await this.db.query(
      'DELETE FROM documents WHERE kind = $1 AND id = $2 AND company_id = $3',
      [this.kind, id, companyId],
    );
    return (r.rowCount ?? 0) > 0;
  }

  private fromRow(row: Row): T {
    return {
      ...row.data,
      id: row.id,
      companyId: row.company_id,
      createdAt: row.created_at,
      modifiedAt: row.modified_at,
    } as T;
  }
}
