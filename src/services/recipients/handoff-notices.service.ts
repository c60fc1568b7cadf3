import type {ChannelRegistry} from "../../channels/channel-registry.js";
import type {Delivery} from "../../channels/channel.js";
import {SYSTEM_ACTOR} from "../../domain/actor.js";
import {contactFor, type Recipient} from "../../domain/recipient.js";
import {finalShifts, onCallAt} from "../../domain/schedules/on-call.js";
import {handoffText, shiftKey} from "../../domain/schedules/handoff.js";
import type {Schedule} from "../../domain/schedules/schedule.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {newId} from "../../lib/ids.js";
import type {Logger} from "../../lib/logger.js";
import {TimedSweep} from "../../lib/timed-sweep.js";
import type {GroupsRepository, RecipientsRepository, SchedulesRepository} from "../../store/config/repositories.js";
import type {AuditService} from "../shared/audit.service.js";
import type {ChannelStatusService} from "../shared/channel-status.service.js";
import {deliverDirect} from "./direct-delivery.js";
import {pagedTarget} from "./paging-target.js";

export interface HandoffNoticesDependencies {
  schedules: SchedulesRepository;
  recipients: RecipientsRepository;
  groups: GroupsRepository;
  registry: ChannelRegistry;
  channelStatus: ChannelStatusService;
  audit: AuditService;
  clock: Clock;
  logger: Logger;
}

/** The audit action that records a notice, and from which the last notice of a schedule is read back. */
const NOTICE_ACTION = "schedule.handoff_notice";
const TIMEOUT_MS = 90_000;
// Far enough to find the next shift of any pattern; the timer re-reads at least every 5 minutes anyway.
const LOOKAHEAD_MS = 8 * 86_400_000;

/**
 * Hand-off notices (opt-in per schedule, `handoff_notice`): when a shift begins, whoever it puts
 * on call is told through their first usable channel, "You are on call for Line 3 until 14:00".
 * A notice is a message, not an alert: nobody acknowledges it and nothing escalates. Each notice
 * is audited with its shift, which is how a restart knows it was sent. `tick()` runs one pass; a
 * timer aims at the next shift start of any such schedule.
 */
export class HandoffNotices extends TimedSweep {
  constructor(deps: HandoffNoticesDependencies) {
    const notices = new HandoffNoticeSender(deps);
    super(deps.clock, {
      pass: () => notices.sendDue(),
      nextDue: () => notices.nextShiftStart(),
      failed: (error) => deps.logger.error("hand-off notices failed", {error})
    });
  }
}

/** Finds the shifts that have begun without their notice, and tells their people. */
class HandoffNoticeSender {
  constructor(private readonly deps: HandoffNoticesDependencies) {}

  /** The next start of a shift of a schedule with notices, or the lookahead's end when none is near. */
  nextShiftStart(): number {
    const now = this.deps.clock.now();
    const starts = this.noticed().flatMap((schedule) =>
      finalShifts(schedule, now, now + LOOKAHEAD_MS)
        .map((shift) => shift.start)
        .filter((start) => start > now)
    );
    return starts.length ? Math.min(...starts) : now + LOOKAHEAD_MS;
  }

  private noticed(): Schedule[] {
    return this.deps.schedules.all().filter((schedule) => schedule.handoff_notice === true);
  }

  async sendDue(): Promise<void> {
    for (const schedule of this.noticed()) {
      const now = this.deps.clock.now();
      const shift = onCallAt(schedule, now);
      if (!shift) continue;
      const key = shiftKey(shift);
      const [last] = this.deps.audit.list({action: NOTICE_ACTION, subject_id: schedule.uuid, limit: 1});
      if (last?.detail.shift === key) continue;
      const text = handoffText(schedule.name, shift, schedule.timezone);
      const results = await Promise.all(this.people(shift.target).map((person) => this.notify(person, text)));
      await this.deps.audit.record(
        SYSTEM_ACTOR,
        NOTICE_ACTION,
        {type: "schedule", id: schedule.uuid},
        {shift: key, until: isoTimestamp(shift.end), text, results}
      );
    }
  }

  private people(target: string): Recipient[] {
    const paged = pagedTarget(target, this.deps);
    if (!paged) return [];
    return paged.kind === "recipient" ? [paged.recipient] : paged.members;
  }

  /** Through the first channel of the person's order that has a contact and works now. */
  private async notify(person: Recipient, text: string) {
    const channel = person.channel_order.find(
      (candidate) =>
        contactFor(person, candidate) !== null &&
        this.deps.channelStatus.gatewayChannel(candidate).available &&
        this.deps.registry.get(candidate) !== null
    );
    const driver = channel && this.deps.registry.get(channel);
    if (!channel || !driver) return {recipient: person.uuid, channel: null, outcome: "unavailable", detail: null};
    const delivery: Delivery = {
      channel,
      recipient: {uuid: person.uuid, name: person.name},
      contact: contactFor(person, channel) as string,
      alerts: [
        {
          // No notification stands behind this id: an acknowledgement of it finds nothing to close.
          notification_id: newId("test", this.deps.clock.now()),
          priority: "info",
          message: text,
          source: "klaxon hand-off notice",
          link: null
        }
      ],
      acknowledge: () => Promise.resolve(),
      testPage: true
    };
    const result = await deliverDirect(driver, delivery, TIMEOUT_MS);
    return {recipient: person.uuid, channel, outcome: result.outcome, detail: result.detail};
  }
}
