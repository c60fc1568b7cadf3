import {Configuration} from "@tsed/di";
import {application} from "@tsed/platform-http";
import "@tsed/platform-express";
import "@tsed/ajv";
import "@tsed/swagger";
import {NotificationsController} from "./api/controllers/notifications.controller.js";
import {RecipientsController} from "./api/controllers/recipients.controller.js";
import {GroupsController} from "./api/controllers/groups.controller.js";
import {AuditController, KeysController} from "./api/controllers/admin.controller.js";
import {HealthController} from "./api/controllers/health.controller.js";
import {AckLinkController} from "./api/controllers/ack-link.controller.js";
import {WebhooksController} from "./api/controllers/webhooks.controller.js";
import {HeartbeatsController} from "./api/controllers/heartbeats.controller.js";
import {IntegrationsController} from "./api/controllers/integrations.controller.js";
import {PingController} from "./api/controllers/ping.controller.js";
import {ProblemFilter} from "./api/errors/problem.filter.js";
import {BackupsController} from "./api/controllers/backups.controller.js";
import {MetricsController} from "./api/controllers/metrics.controller.js";
import {DashboardController, DashboardEntryController} from "./api/controllers/dashboard.controller.js";
import {openApiDocument} from "./api/http/openapi-document.js";
import {requestIdOf} from "./api/http/request-id.js";
import {DOCS_UI, docsSecurityHeaders} from "./api/docs-ui/docs-ui.js";

export const API_CONTROLLERS = [
  NotificationsController,
  RecipientsController,
  GroupsController,
  KeysController,
  AuditController,
  WebhooksController,
  BackupsController,
  HeartbeatsController,
  IntegrationsController
];

/** Every controller, mounted at "/": Ts.ED routes them all, and the lane serves their `@Lane()` routes. */
export const CONTROLLERS = [
  HealthController,
  AckLinkController,
  MetricsController,
  PingController,
  ...API_CONTROLLERS,
  DashboardController,
  DashboardEntryController
];

/** The Ts.ED application: routes, validation, documentation. Runtime values arrive through `imports`. */
@Configuration({
  mount: {"/": CONTROLLERS},
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
        components: {securitySchemes: {api_key: {type: "apiKey", in: "header", name: "X-API-Key"}}}
      } as never
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
    application().use("/docs", docsSecurityHeaders);
  }

  async $onReady(): Promise<void> {
    // /docs reads the cached document: rewrite it before anyone can read it, not on the first /api/v1/openapi.json.
    await openApiDocument();
  }
}
