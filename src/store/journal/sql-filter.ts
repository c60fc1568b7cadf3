/**
 * The WHERE clause of a list query, built from fixed fragments only: every value goes in as a
 * parameter, in the order its fragment was added.
 */
export class SqlFilter {
  private readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  add(clause: string, value: unknown): void {
    this.clauses.push(clause);
    this.params.push(value);
  }

  get where(): string {
    return this.clauses.length ? `WHERE ${this.clauses.join(" AND ")}` : "";
  }
}
