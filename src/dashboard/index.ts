import type {Settings} from "../settings/defaults.js";
import {SettingsError} from "../settings/load-settings.js";
import type {Journal} from "../store/journal/journal.js";
import type {ConfigStore} from "../store/config/config-store.js";
import type {ApiKeysService} from "../services/keys/api-keys.service.js";
import type {AuditService} from "../services/shared/audit.service.js";
import type {Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import {RateLimiter} from "../lib/rate-limiter.js";
import {DashboardUsersService} from "../services/users/dashboard-users.service.js";
import {ActorNamesService} from "../services/users/actor-names.service.js";
import {createUsers} from "../services/users/index.js";
import {DashboardAuthService} from "./dashboard-auth.service.js";
import {EventFeedRepository} from "./event-feed.repository.js";
import {LiveFeed} from "./live-feed.js";
import {SessionStore} from "./session-store.js";
import {dashboardStatics} from "./assets.js";

export interface DashboardDependencies {
  settings: Settings;
  journal: Journal;
  config: ConfigStore;
  keys: ApiKeysService;
  audit: AuditService;
  clock: Clock;
  logger: Logger;
}

/** Builds the dashboard's pieces: its services for Ts.ED, its static files, and the live feed to start and stop. */
export function createDashboard({settings, journal, config, keys, audit, clock, logger}: DashboardDependencies) {
  const {session_hours: sessionHours, sign_in_attempts_per_minute: attemptsPerMinute} = settings.dashboard;
  if (!(sessionHours > 0)) throw new SettingsError(`dashboard.session_hours: must be > 0, got ${sessionHours}`);
  if (!(attemptsPerMinute >= 1))
    throw new SettingsError(`dashboard.sign_in_attempts_per_minute: must be >= 1, got ${attemptsPerMinute}`);
  const sessions = new SessionStore(clock, sessionHours * 3600_000);
  const attempts = new RateLimiter(attemptsPerMinute / 60, attemptsPerMinute, clock);
  const dashboardLogger = logger.child({component: "dashboard"});
  const {users, actorNames} = createUsers(config, {audit, clock});
  const auth = new DashboardAuthService({users, keys, sessions, attempts, audit, logger: dashboardLogger});
  const feed = new LiveFeed(new EventFeedRepository(journal), clock, dashboardLogger);
  return {
    feed,
    statics: dashboardStatics,
    providers: [
      {token: DashboardAuthService, use: auth},
      {token: DashboardUsersService, use: users},
      {token: ActorNamesService, use: actorNames},
      {token: LiveFeed, use: feed}
    ]
  };
}
