import type {ConfigStore} from "../../store/config/config-store.js";
import {DashboardUsersRepository, RecipientsRepository} from "../../store/config/repositories.js";
import type {AuditService} from "../shared/audit.service.js";
import type {Clock} from "../../lib/clock.js";
import {ActorNamesService} from "./actor-names.service.js";
import {DashboardUsersService} from "./dashboard-users.service.js";

/** The dashboard's users on the config store, and the names the audit log shows for its actors. */
export function createUsers(config: ConfigStore, {audit, clock}: {audit: AuditService; clock: Clock}) {
  const users = new DashboardUsersService({
    users: new DashboardUsersRepository(config),
    recipients: new RecipientsRepository(config),
    audit,
    clock
  });
  return {users, actorNames: new ActorNamesService(config)};
}
