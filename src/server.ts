import type {AddressInfo} from "node:net";
import type {Server as HttpServer} from "node:http";
import {Configuration, constant, type TokenProvider} from "@tsed/di";
import {application, type PlatformBuilder} from "@tsed/platform-http";
import {PlatformExpress} from "@tsed/platform-express";
import "@tsed/platform-express";
import "@tsed/ajv";
import "@tsed/swagger";
// Ts.ED's parameter pipeline, validation pipe and response filter without their repeated work (their decorators register them).
import "./api/http/framework-overrides.js";
import "./api/http/parameter-pipeline.js";
import {NotificationsController} from "./api/controllers/notifications.controller.js";
import {RecipientsController} from "./api/controllers/recipients.controller.js";
import {GroupsController} from "./api/controllers/groups.controller.js";
import {EscalationPoliciesController} from "./api/controllers/escalation-policies.controller.js";
import {SchedulesController} from "./api/controllers/schedules.controller.js";
import {TargetsController} from "./api/controllers/targets.controller.js";
import {RecipientPreviewController} from "./api/controllers/recipient-preview.controller.js";
import {CalendarFeedController, RecipientCalendarController} from "./api/controllers/calendar.controller.js";
import {AuditController, KeysController} from "./api/controllers/admin.controller.js";
import {UsersController} from "./api/controllers/users.controller.js";
import {HealthController} from "./api/controllers/health.controller.js";
import {AckLinkController} from "./api/controllers/ack-link.controller.js";
import {WebhooksController} from "./api/controllers/webhooks.controller.js";
import {HeartbeatsController} from "./api/controllers/heartbeats.controller.js";
import {IntegrationsController} from "./api/controllers/integrations.controller.js";
import {MaintenanceController} from "./api/controllers/maintenance.controller.js";
import {PingController} from "./api/controllers/ping.controller.js";
import {ProblemFilter} from "./api/errors/problem.filter.js";
import {BackupsController} from "./api/controllers/backups.controller.js";
import {ReplicationController} from "./api/controllers/replication.controller.js";
import {MetricsController} from "./api/controllers/metrics.controller.js";
import {DashboardController, DashboardEntryController} from "./api/controllers/dashboard.controller.js";
import {StandbyController} from "./api/controllers/standby.controller.js";
import {standbyGate, StandbyStatus} from "./api/standby/standby-door.js";
// Ts.ED's OpenAPI service replaced by one that builds the document when first asked (its decorator registers it).
import "./api/http/openapi-document.js";
import {requestIdOf} from "./api/http/request-id.js";
import {DOCS_UI, docsSecurityHeaders} from "./api/docs-ui/docs-ui.js";
import {BODY_PIPELINE, requestLog, type RequestRecorder} from "./api/http/pipeline.js";
import {AdmittingServer, limitConnections} from "./api/connections/connection-limits.js";
import {listenBacklog, listenWithBacklog} from "./api/connections/listen-backlog.js";
import {admitRequests} from "./api/connections/request-admission.js";
import {paceRequests} from "./api/connections/request-pacing.js";
import type {Logger} from "./lib/logger.js";
import type {Settings} from "./settings/defaults.js";

export const API_CONTROLLERS = [
  NotificationsController,
  RecipientsController,
  GroupsController,
  EscalationPoliciesController,
  SchedulesController,
  TargetsController,
  RecipientPreviewController,
  RecipientCalendarController,
  CalendarFeedController,
  KeysController,
  UsersController,
  AuditController,
  WebhooksController,
  BackupsController,
  HeartbeatsController,
  IntegrationsController,
  MaintenanceController,
  ReplicationController
];

/** Every controller of an active box, mounted at "/". */
export const CONTROLLERS = [
  HealthController,
  AckLinkController,
  MetricsController,
  PingController,
  ...API_CONTROLLERS,
  DashboardController,
  DashboardEntryController
];

/** Whether this door serves the API document and /docs: the active's does, a standby's has none. */
const servesDocuments = () => constant<unknown[]>("swagger", []).length > 0;

/** What a standby box mounts: its own /healthz and /readyz; its gate refuses everything else. */
export const STANDBY_CONTROLLERS = [StandbyController];

/**
 * The Ts.ED application: validation, documentation, errors. The routes are the role's (`openHttpFront`
 * mounts them); runtime values arrive through `imports`.
 */
@Configuration({
  imports: [ProblemFilter],
  logger: {level: "off", disableRoutesSummary: true, reqIdBuilder: requestIdOf},
  disableComponentsScan: true,
  // Bodies are validated as sent: "5" is not a number and 5 is not a string. So validation
  // changes nothing, and the validated value is handed on as it is instead of a deep copy of it.
  ajv: {coerceTypes: false, allErrors: true, returnsCoercedValues: true},
  swagger: [
    {
      path: "/docs",
      ...DOCS_UI,
      specVersion: "3.0.3",
      fileName: "openapi.json",
      spec: {
        info: {
          title: "Klaxon API",
          version: "1.0.0",
          description:
            "Alert escalation gateway: send alerts, track and acknowledge them. Errors are RFC 9457 problem+json.",
          license: {name: "MIT", url: "https://opensource.org/license/mit"}
        },
        // The gateway that serves this document: clients resolve "/" against the address they read it from.
        servers: [{url: "/", description: "This gateway"}],
        components: {
          securitySchemes: {
            api_key: {
              type: "apiKey",
              in: "header",
              name: "X-API-Key",
              description: "The same key is taken as `Authorization: Bearer <key>`, with the same answers."
            }
          }
        }
      }
    }
  ]
})
export class Server {
  $beforeRoutesInit(): void {
    // API answers are not cached by clients; hashing every body for an ETag was pure cost.
    application().getApp().set("etag", false);
    // A TLS-terminating proxy on the box itself (nginx, caddy) says the page came over https, so
    // the dashboard's cookie is marked Secure; X-Forwarded-* from any other peer is not believed.
    application().getApp().set("trust proxy", "loopback");
    // Mounted ahead of the Swagger module's routes, which it must precede to set their headers.
    if (servesDocuments()) application().use("/docs", docsSecurityHeaders);
  }
}

/** The HTTP side of a started gateway. */
export interface HttpFront {
  platform: PlatformBuilder;
  server: HttpServer;
  /** Where it serves, with 127.0.0.1 for a wildcard bind. */
  url: string;
}

export interface HttpFrontParts {
  /** The services the controllers inject, as ready values. */
  providers: Array<{token: TokenProvider; use: unknown}>;
  statics?: NonNullable<Parameters<typeof PlatformExpress.bootstrap>[1]>["statics"];
  recordRequest: RequestRecorder;
  logger: Logger;
  /** Given on a standby box: the door serves the standby's two routes and refuses the rest at its gate. */
  standby?: StandbyStatus;
}

/**
 * The one door of a box, the active's or the standby's: every request enters Ts.ED on Express (one
 * listener, one router, one error writer, one request log), with the connection limits on the
 * socket, listening. The role decides the answers: the active mounts every controller; a standby
 * its own two, behind its gate. Ts.ED's injector is one per process, so a process serves one door
 * at a time: a standby closes its door before it opens the active's at a takeover.
 */
export async function openHttpFront(settings: Settings, parts: HttpFrontParts): Promise<HttpFront> {
  const {standby} = parts;
  const platform = await PlatformExpress.bootstrap(Server, {
    // The gateway makes its own server: Ts.ED's is a singleton of its process-wide injector, so a
    // second gateway in one process (tests, a standby taking over) got the first one's server back.
    httpPort: false,
    httpsPort: false,
    mount: {"/": standby ? STANDBY_CONTROLLERS : CONTROLLERS},
    // A standby builds only what its routes use: every controller is registered on import, and the
    // active's inject services a standby does not have.
    lazyProviders: standby !== undefined,
    // Nor does it document an API it does not serve (/docs and the document are the active's).
    ...(standby ? {swagger: []} : {}),
    // Admission first: a request refused for overload costs nothing more than its answer.
    middlewares: [
      admitRequests(settings.http.max_requests_in_flight, parts.logger),
      requestLog(parts.recordRequest),
      // After the request log, so a request's recorded duration includes its wait for a turn.
      paceRequests(),
      ...(standby ? [standbyGate(standby)] : []),
      ...BODY_PIPELINE
    ],
    statics: parts.statics,
    imports: standby ? [...parts.providers, {token: StandbyStatus, use: standby}] : parts.providers
  });
  const server = new AdmittingServer(platform.callback());
  const limits = limitConnections(server, settings.http, parts.logger);
  // Ts.ED's own listen takes Node's backlog of 511; the app is made ready first, then listens with the system's.
  await platform.listen(false);
  const backlog = listenBacklog();
  if (backlog < limits.maxConnections)
    parts.logger.warn(
      "net.core.somaxconn is below http.max_connections: in a storm, connections beyond it wait for SYN resends (install.sh raises it)",
      {
        somaxconn: backlog,
        max_connections: limits.maxConnections
      }
    );
  try {
    await listenWithBacklog(server, {host: settings.host, port: settings.port}, backlog);
  } catch (error) {
    // The process's one injector is free again for whatever starts next (a start that retries, a test).
    await platform.stop();
    throw error;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${address.port}`;
  return {platform, server, url};
}

/**
 * Closes a door: its connections at once, then its Ts.ED app, so another (the active's, at a
 * takeover) can be built in this process. A gateway closes its own more gently (`stop`).
 */
export async function closeHttpFront({server, platform}: HttpFront): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await platform.stop();
}
