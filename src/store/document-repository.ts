// Company-owned configuration objects (trunks, agents, routes, VoIP phones)
// share one table of JSON documents; each kind gets a typed repository.
import type { Db } from './database.js';
import type { OwnedDocument } from '../model/entities.js';

interface Row {
  id: string;
  company_id: string;
  data: string;
  created_at: string;
  modified_at: string;
}

export class DocumentRepository<T extends OwnedDocument> {
  private readonly stmts;

  constructor(
    private readonly db: Db,
    private readonly kind: string,
  ) {
    this.stmts = {
      insert: db.prepare(
        'INSERT INTO documents (kind, id, company_id, data, created_at, modified_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      get: db.prepare('SELECT * FROM documents WHERE kind = ? AND id = ? AND company_id = ?'),
      getAny: db.prepare('SELECT * FROM documents WHERE kind = ? AND id = ?'),
      list: db.prepare(
        'SELECT * FROM documents WHERE kind = ? AND company_id = ? ORDER BY created_at, id',
      ),
      listAll: db.prepare('SELECT * FROM documents WHERE kind = ? ORDER BY created_at, id'),
      update: db.prepare(
        'UPDATE documents SET data = ?, modified_at = ? WHERE kind = ? AND id = ? AND company_id = ?',
      ),
      remove: db.prepare('DELETE FROM documents WHERE kind = ? AND id = ? AND company_id = ?'),
    };
  }

  insert(doc: T): T {
    const { id, companyId, createdAt, modifiedAt, ...data } = doc;
    this.stmts.insert.run(this.kind, id, companyId, JSON.stringify(data), createdAt, modifiedAt);
    return doc;
  }

  /** The document when it exists and belongs to the company. */
  get(companyId: string, id: string): T | undefined {
    const row = this.stmts.get.get(this.kind, id, companyId) as Row | undefined;
    return row && this.fromRow(row);
  }

  /** Regardless of owner: only for internal wiring (never for API reads). */
  getById(id: string): T | undefined {
    const row = this.stmts.getAny.get(this.kind, id) as Row | undefined;
    return row && this.fromRow(row);
  }

  list(companyId: string): T[] {
    return (this.stmts.list.all(this.kind, companyId) as Row[]).map((r) => this.fromRow(r));
  }

  /** Every company's documents of this kind: only for internal wiring (the trunk monitor). */
  listAll(): T[] {
    return (this.stmts.listAll.all(this.kind) as Row[]).map((r) => this.fromRow(r));
  }

  update(doc: T): T {
    const { id, companyId, createdAt: _c, modifiedAt, ...data } = doc;
    this.stmts.update.run(JSON.stringify(data), modifiedAt, this.kind, id, companyId);
    return doc;
  }

  remove(companyId: string, id: string): boolean {
    return this.stmts.remove.run(this.kind, id, companyId).changes > 0;
  }

  private fromRow(row: Row): T {
    return {
      ...(JSON.parse(row.data) as object),
      id: row.id,
      companyId: row.company_id,
      createdAt: row.created_at,
      modifiedAt: row.modified_at,
    } as T;
  }
}
