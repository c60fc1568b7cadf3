import {Controller, inject} from "@tsed/di";
import {Context, PathParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Get, Hidden, Post} from "@tsed/schema";
import {AckLinksService} from "../../services/notifications/ack-links.service.js";
import {AppError} from "../../services/shared/errors.js";
import {ERROR_CATALOGUE} from "../errors/catalogue.js";
import {confirmPage, donePage, errorPage} from "./ack-link.pages.js";
import {expressResponse} from "../typed-tsed.js";

// The URL carries the link's authority: it must not leak through a Referer to the alert's own
// link, be cached or indexed, or be framed (a hidden button under a decoy is clickjacking).
const PAGE_HEADERS: Record<string, string> = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
  "X-Robots-Tag": "noindex",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
};

function sendPage(ctx: PlatformContext, status: number, body: string): void {
  const response = expressResponse(ctx);
  for (const [name, value] of Object.entries(PAGE_HEADERS)) response.setHeader(name, value);
  response.status(status).send(body);
}

/**
 * The Acknowledge link of an email, for a person in a browser: GET shows what it will
 * acknowledge and changes nothing (mail scanners and link previews open every link); only the
 * page's button, a plain form POST with no body, acknowledges. Answers are HTML, errors too, with
 * the status the error catalogue gives. Outside /api/v1, needs no key, not in the API document.
 */
@Controller("/ack")
@Hidden()
export class AckLinkController {
  private readonly links = inject(AckLinksService);

  @Get("/:token")
  async show(@PathParams("token") token: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.answer(ctx, () => confirmPage(this.links.inspect(token)));
  }

  @Post("/:token")
  async confirm(@PathParams("token") token: string, @Context() ctx: PlatformContext): Promise<void> {
    await this.answer(ctx, async () => donePage(await this.links.confirm(token)));
  }

  private async answer(ctx: PlatformContext, render: () => string | Promise<string>): Promise<void> {
    try {
      sendPage(ctx, 200, await render());
    } catch (error) {
      // Anything unexpected goes to the problem filter, which logs it.
      if (!(error instanceof AppError)) throw error;
      const entry = ERROR_CATALOGUE[error.code];
      sendPage(ctx, entry.status, errorPage(entry.title, error.message, entry.advice.replace(/`/g, "")));
    }
  }
}
