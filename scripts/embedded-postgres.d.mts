/** scripts/embedded-postgres.mjs: a throw-away PostgreSQL for the tests and benchmarks. */
export interface EmbeddedPostgres {
  readonly url: string;
  /** The postmaster's pid: its children are the server's other processes. */
  readonly pid: number;
  stop(): Promise<void>;
}
export function startEmbeddedPostgres(flags?: string[]): Promise<EmbeddedPostgres>;
