import {Controller, inject} from "@tsed/di";
import {Context, PathParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Description, Get, Post, Returns, Summary, Tags} from "@tsed/schema";
import {CalendarFeeds} from "../../services/recipients/calendar-feeds.service.js";
import {AppError} from "../../services/shared/errors.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {Public} from "../auth/public.js";
import {API_TAGS} from "../http/openapi-tags.js";
import {ProblemModel} from "../models/problem.model.js";
import {RecipientFeedModel} from "../models/schedule.model.js";
import {clientAddress, Runtime} from "../runtime.js";
import {expressRequest, expressResponse} from "../typed-tsed.js";

const FEED_SUFFIX = ".ics";

/** The key-less feeds themselves, for calendar apps that can hold a URL and nothing else. */
@Controller("/ical")
@Tags(API_TAGS.calendars)
@Public()
export class CalendarFeedController {
  private readonly feeds = inject(CalendarFeeds);
  private readonly runtime = inject(Runtime);

  @Get("/:file")
  @Summary("An iCal feed of on-call shifts: the past week and the next 60 days")
  @Description(
    "No API key: the unguessable token in the path (`<token>.ics`) is the credential. Times are UTC; the calendar shows them in its own zone."
  )
  @(Returns(200, String).ContentType("text/calendar"))
  @(Returns(404, ProblemModel).Description("No schedule or recipient has this feed URL"))
  @(Returns(429, ProblemModel).Description("Too many unknown tokens from this address (a valid one still passes)"))
  feed(@PathParams("file") file: string, @Context() ctx: PlatformContext): void {
    const token = file.endsWith(FEED_SUFFIX) ? file.slice(0, -FEED_SUFFIX.length) : "";
    const feed = token ? this.feeds.feed(token) : null;
    const response = expressResponse(ctx);
    if (!feed) {
      // Guessing feed tokens counts against the address like guessing keys and ping URLs.
      this.runtime.authenticationFailed(clientAddress(expressRequest(ctx)), token, response);
      throw new AppError("not_found", "no schedule or recipient has this calendar feed URL");
    }
    response.status(200).type("text/calendar; charset=utf-8").setHeader("Cache-Control", "no-cache");
    response.send(feed.text);
  }
}

/** A recipient's own feed URL, beside the recipient routes. */
@Controller("/api/v1/recipients")
@Tags(API_TAGS.calendars)
export class RecipientCalendarController {
  private readonly feeds = inject(CalendarFeeds);

  @Get("/:uuid/ical")
  @Authorize("recipients:read")
  @Summary("The recipient's iCal feed URL (their shifts in every schedule)")
  @Returns(200, RecipientFeedModel)
  @Returns(404, ProblemModel)
  url(@PathParams("uuid") uuid: string) {
    return this.feeds.recipientFeedUrl(uuid);
  }

  @Post("/:uuid/ical-token/rotate")
  @Authorize("recipients:write")
  @Summary("Make the recipient's iCal feed URL, or replace it: the old one stops working at once")
  @Returns(200, RecipientFeedModel)
  @Returns(404, ProblemModel)
  rotate(@PathParams("uuid") uuid: string, @Context() ctx: PlatformContext) {
    return this.feeds.rotateRecipientFeed(uuid, actorOf(ctx));
  }
}
