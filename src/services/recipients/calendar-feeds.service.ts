import type {Actor} from "../../domain/actor.js";
import {renderCalendar, type CalendarEvent} from "../../domain/schedules/ical.js";
import {MS_PER_DAY, type Schedule} from "../../domain/schedules/schedule.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {secretToken, tokensEqual} from "../../lib/tokens.js";
import type {CalendarFeedsRepository, RecipientsRepository} from "../../store/config/repositories.js";
import type {AuditService} from "../shared/audit.service.js";
import {notFound} from "../shared/errors.js";
import type {OnCallService, ShiftView} from "./on-call.service.js";
import {icalUrl, type SchedulesService} from "./schedules.service.js";

/** A feed shows the past week (what just happened) and the next two months. */
const FEED_DAYS_BACK = 7;
const FEED_DAYS_AHEAD = 60;

export interface CalendarFeedsDependencies {
  schedules: SchedulesService;
  onCall: OnCallService;
  feeds: CalendarFeedsRepository;
  recipients: RecipientsRepository;
  audit: AuditService;
  clock: Clock;
  publicBase: () => string;
}

/** What put someone on call, in a few words: "night, crew C", a layer's name, "override". */
function why(shift: ShiftView): string | null {
  if (shift.source === "override") return "override";
  if (shift.source === "shift_pattern") return `${shift.shift_name}, crew ${shift.crew}`;
  return shift.layer_name;
}

/**
 * The key-less iCal feeds: one per schedule (every final shift) and one per recipient (their
 * shifts in every schedule, a group crew's included). The token in the URL is the credential,
 * as with ping URLs; rotating it ends the old URL at once.
 */
export class CalendarFeeds {
  constructor(private readonly deps: CalendarFeedsDependencies) {}

  private shiftsOf(schedule: Schedule, nowMs: number): ShiftView[] {
    // Whole shifts: a UID and DTSTART cut to the window would change at every fetch.
    return this.deps.onCall.wholeShifts(
      schedule.uuid,
      nowMs - FEED_DAYS_BACK * MS_PER_DAY,
      nowMs + FEED_DAYS_AHEAD * MS_PER_DAY
    );
  }

  private event(schedule: Schedule, shift: ShiftView, summary: string): CalendarEvent {
    const reason = why(shift);
    return {
      uid: `${schedule.uuid}/${Date.parse(shift.starts_at)}/${shift.target.uuid}@klaxon`,
      start: Date.parse(shift.starts_at),
      end: Date.parse(shift.ends_at),
      summary: reason ? `${summary} (${reason})` : summary,
      description:
        `${shift.recipients.map((recipient) => recipient.name).join(", ") || shift.target.name} on call for ` +
        `${schedule.name} (schedule zone ${schedule.timezone}). Alerts sent to the schedule page them.`
    };
  }

  /** The feed a token opens (a schedule's or a recipient's), or null when none has it. */
  feed(token: string): {name: string; text: string} | null {
    const nowMs = this.deps.clock.now();
    const schedules = this.deps.schedules.all();
    const schedule = schedules.find((candidate) => tokensEqual(token, candidate.ical_token));
    if (schedule) {
      const events = this.shiftsOf(schedule, nowMs).map((shift) => this.event(schedule, shift, shift.target.name));
      return {name: schedule.name, text: renderCalendar(`${schedule.name} on call`, events, nowMs)};
    }
    const feed = this.deps.feeds.all().find((candidate) => tokensEqual(token, candidate.token));
    const recipient = feed ? this.deps.recipients.get(feed.recipient_uuid) : null;
    if (!recipient) return null;
    const events = schedules
      .flatMap((each) =>
        this.shiftsOf(each, nowMs)
          .filter((shift) => shift.recipients.some((person) => person.uuid === recipient.uuid))
          .map((shift) => this.event(each, shift, `On call: ${each.name}`))
      )
      .sort((a, b) => a.start - b.start);
    return {name: recipient.name, text: renderCalendar(`${recipient.name} on call`, events, nowMs)};
  }

  /** A recipient's feed URL; null until a token is made with `rotateRecipientFeed`. */
  recipientFeedUrl(uuid: string): {ical_url: string | null} {
    if (!this.deps.recipients.get(uuid)) throw notFound("recipient", uuid);
    const feed = this.deps.feeds.get(uuid);
    return {ical_url: feed ? icalUrl(this.deps.publicBase(), feed.token) : null};
  }

  /** Makes the recipient's feed URL, or replaces it: the old one stops working at once. */
  async rotateRecipientFeed(uuid: string, actor: Actor): Promise<{ical_url: string}> {
    if (!this.deps.recipients.get(uuid)) throw notFound("recipient", uuid);
    const feed = {recipient_uuid: uuid, token: secretToken(), created_at: isoTimestamp(this.deps.clock.now())};
    await this.deps.feeds.upsert(feed);
    await this.deps.audit.record(actor, "recipient.ical_url_rotated", {type: "recipient", id: uuid}, {});
    return {ical_url: icalUrl(this.deps.publicBase(), feed.token)};
  }
}
