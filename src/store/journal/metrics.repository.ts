import type {Statement} from "better-sqlite3";
import {prepareAll, type Journal} from "./journal.js";

const SQL = {
  notifications: `SELECT status, priority, COUNT(*) AS n FROM notifications GROUP BY status, priority`,
  attempts: `SELECT channel, outcome, COUNT(*) AS n FROM attempts GROUP BY channel, outcome`,
  running: `SELECT COUNT(*) AS n FROM escalations WHERE state = 'running'`,
  integrationMessages: `SELECT kind, 'accepted' AS outcome, sum(accepted) AS n FROM integration_stats GROUP BY kind
    UNION ALL SELECT kind, 'unmapped', sum(unmapped) FROM integration_stats GROUP BY kind
    UNION ALL SELECT kind, 'refused', sum(refused) FROM integration_stats GROUP BY kind`
};

/** Row counts the /metrics endpoint reports; reads only. */
export class MetricsRepository {
  private readonly statements: Record<keyof typeof SQL, Statement>;

  constructor(journal: Journal) {
    this.statements = prepareAll(journal.db, SQL);
  }

  notificationsByStatusAndPriority(): Array<{status: string; priority: string; n: number}> {
    return this.statements.notifications.all() as Array<{status: string; priority: string; n: number}>;
  }

  attemptsByChannelAndOutcome(): Array<{channel: string; outcome: string; n: number}> {
    return this.statements.attempts.all() as Array<{channel: string; outcome: string; n: number}>;
  }

  /** Messages device integrations received, by integration kind and outcome (accepted, unmapped, refused). */
  integrationMessagesByKindAndOutcome(): Array<{kind: string; outcome: string; n: number}> {
    return this.statements.integrationMessages.all() as Array<{kind: string; outcome: string; n: number}>;
  }

  runningEscalations(): number {
    return (this.statements.running.get() as {n: number}).n;
  }
}
