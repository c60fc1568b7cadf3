import {Controller, inject} from "@tsed/di";
import {Middleware, UseBefore, type MiddlewareMethods} from "@tsed/platform-middlewares";
import {BodyParams, Context, PathParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Get, Hidden, Post, Required} from "@tsed/schema";
import type {Request} from "express";
import {
  dashboardActor,
  DashboardAuthService,
  DEFAULT_USER_NAME,
  type SessionUser
} from "../../dashboard/dashboard-auth.service.js";
import type {DashboardSession} from "../../dashboard/session-store.js";
import type {DashboardUserRecord} from "../../store/config/config-store.js";
import {refusalFor, roleAllows, ROLES} from "../../domain/roles.js";
import {clearedSessionCookie, sessionCookie, sessionTokenOf} from "../../dashboard/session-cookie.js";
import {LiveFeed} from "../../dashboard/live-feed.js";
import {DASHBOARD_PATH} from "../../dashboard/assets.js";
import {NotificationsService} from "../../services/notifications/notifications.service.js";
import {AppError} from "../../services/shared/errors.js";
import {isoTimestamp} from "../../lib/clock.js";
import {CHANNELS, EVENT_TYPES, NOTIFICATION_STATUSES, PRIORITIES, SCOPES} from "../../domain/vocabulary.js";
import {AcknowledgeModel} from "../models/notification.model.js";
import {SetPasswordModel, SignInModel} from "../models/dashboard.model.js";
import {noContent} from "../http/respond.js";
import {expressRequest, expressResponse} from "../typed-tsed.js";

function addressOf(request: Request): string {
  return request.socket.remoteAddress ?? "unknown";
}

/** Charges a sign-in or set-password attempt before Ts.ED reads and validates the body. */
@Middleware()
class DashboardAttempt implements MiddlewareMethods {
  private readonly auth = inject(DashboardAuthService);

  use(@Context() ctx: PlatformContext): void {
    this.auth.chargeAttempt(addressOf(expressRequest(ctx)));
  }
}

const VOCABULARY_MODULE = `export const VOCABULARY = ${JSON.stringify({
  channels: CHANNELS,
  priorities: PRIORITIES,
  statuses: NOTIFICATION_STATUSES,
  scopes: SCOPES,
  roles: ROLES,
  event_types: EVENT_TYPES
})};\n`;

/** The session's CSRF token and end, and who is signed in (the page shows only what their role may do). */
function sessionView(session: DashboardSession, user: DashboardUserRecord) {
  return {
    csrf_token: session.csrfToken,
    expires_at: isoTimestamp(session.expiresAtMs),
    user: {id: user.id, name: user.name, role: user.role}
  };
}

/**
 * What only the dashboard page uses: the first admin and forgotten passwords, sign-in and
 * sign-out, the live change stream, and acknowledging as the signed-in person. Everything else the page does goes through
 * /api/v1 with the session cookie. Not in the public API document.
 */
@Controller(`${DASHBOARD_PATH}/api`)
@Hidden()
export class DashboardController {
  private readonly auth = inject(DashboardAuthService);
  private readonly feed = inject(LiveFeed);
  private readonly notifications = inject(NotificationsService);

  /**
   * The gateway's words the page offers in its forms and filters, as a script module made from the
   * domain's vocabulary: a copy in the page's script fell behind whenever an event type or scope
   * was added. A module (not JSON to fetch) loads with the page's other imports, in parallel. Not
   * secret (the API document lists them all), so no session is needed.
   */
  @Get("/vocabulary.js")
  vocabulary(@Context() ctx: PlatformContext): void {
    const response = expressResponse(ctx);
    response.status(200).type("text/javascript; charset=utf-8").setHeader("Cache-Control", "no-cache");
    response.send(VOCABULARY_MODULE);
  }

  /** What the page should show: make the first admin, sign in, or the app (with the CSRF token and the user). */
  @Get("/session")
  session(@Context() ctx: PlatformContext) {
    const signedIn = this.auth.signedIn(sessionTokenOf(expressRequest(ctx)));
    return {
      password_set: this.auth.passwordSet,
      signed_in: signedIn !== null,
      ...(signedIn ? sessionView(signedIn.session, signedIn.user) : {csrf_token: null, expires_at: null, user: null})
    };
  }

  /** With an admin API key: the first admin (by name), or a new password for a user who forgot theirs. */
  @Post("/password")
  @UseBefore(DashboardAttempt)
  async setPassword(@Required() @BodyParams() body: SetPasswordModel, @Context() ctx: PlatformContext) {
    const credentials = {name: body.name ?? DEFAULT_USER_NAME, password: body.password};
    await this.auth.setPassword(body.admin_key, credentials, addressOf(expressRequest(ctx)));
    noContent(ctx);
  }

  @Post("/sign-in")
  @UseBefore(DashboardAttempt)
  async signIn(@Required() @BodyParams() body: SignInModel, @Context() ctx: PlatformContext) {
    const request = expressRequest(ctx);
    const name = body.name ?? DEFAULT_USER_NAME;
    const {token, session, user} = await this.auth.signIn(name, body.password, addressOf(request));
    expressResponse(ctx).setHeader(
      "Set-Cookie",
      sessionCookie(token, Math.floor(this.auth.sessions.lifetimeMs / 1000), request.secure)
    );
    return sessionView(session, user);
  }

  @Post("/sign-out")
  async signOut(@Context() ctx: PlatformContext) {
    const request = expressRequest(ctx);
    await this.auth.signOut(sessionTokenOf(request) as string, this.requireSession(request));
    expressResponse(ctx).setHeader("Set-Cookie", clearedSessionCookie(request.secure));
    noContent(ctx);
  }

  /** Server-sent events: `change` with `{seq, type, notification_id}` whenever the journal records one. */
  @Get("/events")
  events(@Context() ctx: PlatformContext): void {
    const request = expressRequest(ctx);
    const {session} = this.requireSession(request);
    const response = expressResponse(ctx);
    response.writeHead(200, {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no"
    });
    response.write("retry: 3000\n\n");
    const unsubscribe = this.feed.subscribe({
      isLive: () => this.auth.isLive(session),
      send: (entry) => response.write(`event: change\ndata: ${JSON.stringify(entry)}\n\n`),
      keepAlive: () => response.write(": keep-alive\n\n"),
      close: (reason) => response.end(`event: ${reason}\ndata: {}\n\n`)
    });
    request.on("close", unsubscribe);
  }

  /**
   * Acknowledges via the dashboard as the signed-in person: their recipient's name when the user
   * is linked to one, else the user's ("acknowledged by Maria via dashboard"). `by` in the body
   * is not taken: a user acknowledges as themselves.
   */
  @Post("/notifications/:id/ack")
  acknowledge(@PathParams("id") id: string, @Context() ctx: PlatformContext, @BodyParams() body?: AcknowledgeModel) {
    const {user} = this.requireSession(expressRequest(ctx));
    if (!roleAllows(user.role, "notifications:ack", undefined))
      throw new AppError("forbidden", refusalFor(user.name, user.role));
    return this.notifications.acknowledge(
      id,
      {by: this.auth.users.personOf(user), note: body?.note || null, via: "dashboard"},
      dashboardActor(user)
    );
  }

  private requireSession(request: Request): SessionUser {
    const session = this.auth.sessionFor(request);
    if (!session) throw new AppError("unauthenticated", "sign in to the dashboard first");
    return session;
  }
}

/** Whoever opens the box's address in a browser lands on the dashboard. */
@Controller("/")
@Hidden()
export class DashboardEntryController {
  @Get("/")
  enter(@Context() ctx: PlatformContext): void {
    expressResponse(ctx).redirect(302, `${DASHBOARD_PATH}/`);
  }
}
