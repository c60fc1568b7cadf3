import {CHANNEL_CONTACT} from "../domain/recipient.js";
import type {Channel, Priority} from "../domain/vocabulary.js";
import {isoTimestamp, type Clock} from "../lib/clock.js";
import type {Logger} from "../lib/logger.js";
import type {ChannelRegistry} from "../channels/channel-registry.js";
import {StorageUnavailableError, type Journal} from "../store/journal/journal.js";
import type {EventsRepository} from "../store/journal/events.repository.js";
import type {NotificationsRepository} from "../store/journal/notifications.repository.js";
import type {Actor} from "../store/journal/audit.repository.js";
import type {GroupsRepository, RecipientsRepository} from "../store/config/repositories.js";
import type {ChannelStatusService} from "./channel-status.service.js";
import type {NotificationsService} from "./notifications.service.js";
import {selfCheck, type Condition, type SelfMonitorLimits} from "./self-monitor-conditions.js";

export interface SelfMonitorSettings extends SelfMonitorLimits {
  /** Recipient or group uuid; empty turns self-monitoring off. */
  recipient: string;
  priority: Priority;
}

const SYSTEM: Actor = {type: "system", id: null};
const SOURCE = "klaxon";
// With no journal nothing can be accepted, so the out-of-band page goes straight to a driver,
// cheapest and least dependent first: SMS needs neither the disk nor the internet.
const OUT_OF_BAND_ORDER: Channel[] = ["sms", "voice_call", "email", "telegram_voice"];
const OUT_OF_BAND_TIMEOUT_MS = 3 * 60_000;

export const dedupKeyOf = (condition: Pick<Condition, "key">) => `klaxon:${condition.key}`;

/**
 * The gateway watching its own paging path. Each condition (selfCheck) raises one alert to the
 * configured admin recipient through the normal escalation, which skips channels that are down,
 * so it arrives over whichever channel still works; it carries the dedup key `klaxon:<key>`, is
 * raised once per episode (an acknowledged one is not raised again while the problem lasts) and
 * is resolved when the condition clears.
 *
 * A journal that cannot commit (disk full) cannot accept an alert either: that one is paged
 * out of band, one delivery straight through a driver per outage, recorded only in the log.
 */
export class SelfMonitorService {
  /** Conditions with an alert raised in this run, and that alert's id. */
  private readonly raised = new Map<string, string>();
  private pagedJournalOutage = false;

  constructor(
    private readonly settings: SelfMonitorSettings,
    private readonly journal: Journal,
    private readonly notifications: NotificationsService,
    private readonly notificationRecords: NotificationsRepository,
    private readonly events: EventsRepository,
    private readonly channelStatus: ChannelStatusService,
    private readonly registry: ChannelRegistry,
    private readonly recipients: RecipientsRepository,
    private readonly groups: GroupsRepository,
    private readonly clock: Clock,
    private readonly logger: Logger
  ) {}

  get enabled(): boolean {
    return this.settings.recipient !== "";
  }

  /** One pass: checks the journal first (everything else needs it), then every condition. */
  async tick(): Promise<void> {
    if (!this.enabled) return;
    if (!(await this.journalCommits())) {
      await this.pageJournalOutage();
      return;
    }
    if (this.pagedJournalOutage) this.logger.info("self-monitoring: the journal commits again");
    this.pagedJournalOutage = false;
    const conditions = selfCheck(
      {
        channels: this.registry.all().map((driver) => this.channelStatus.gatewayChannel(driver.channel)),
        outbox: this.journal.read(() => this.events.backlog()),
        nowMs: this.clock.now()
      },
      this.settings
    );
    for (const condition of conditions) {
      try {
        if (condition.problem) await this.raise(condition, condition.problem);
        else await this.clear(condition);
      } catch (error) {
        this.logger.error("self-monitoring could not raise or resolve an alert", {condition: condition.key, error: error as Error});
      }
    }
  }

  private async journalCommits(): Promise<boolean> {
    try {
      await this.journal.probe(isoTimestamp(this.clock.now()));
      return true;
    } catch (error) {
      if (error instanceof StorageUnavailableError) return false;
      throw error;
    }
  }

  private openAlert(condition: Condition): string | null {
    return this.journal.read(() => this.notificationRecords.findOpenByDedup(this.settings.recipient, dedupKeyOf(condition)))?.id ?? null;
  }

  private async raise(condition: Condition, problem: string): Promise<void> {
    const earlier = this.raised.get(condition.key);
    if (earlier && !this.reachedNobody(earlier)) return;
    // After a restart the alert of an earlier run may still be open: adopt it instead of paging again.
    const open = this.openAlert(condition);
    if (open) {
      this.raised.set(condition.key, open);
      return;
    }
    const {body} = await this.notifications.send(
      {recipient_uuid: this.settings.recipient, message: `Klaxon gateway: ${problem}`, priority: this.settings.priority, source: SOURCE, dedup_key: dedupKeyOf(condition)},
      SYSTEM,
      null,
      (outcome) => ({status: 202, body: {id: outcome.view.id}})
    );
    const id = (body as {id: string}).id;
    this.raised.set(condition.key, id);
    this.logger.warn("self-monitoring raised an alert", {condition: condition.key, problem, notification_id: id});
  }

  /**
   * An alert raised while every channel was down exhausts at once with only skipped attempts:
   * nobody heard it. Once a channel works again it is raised anew.
   */
  private reachedNobody(id: string): boolean {
    const alert = this.notifications.get(id);
    const anyChannelWorks = this.registry.all().some((driver) => this.channelStatus.gatewayChannel(driver.channel).available);
    return alert.status === "exhausted" && alert.attempts.every((attempt) => attempt.outcome === "skipped") && anyChannelWorks;
  }

  private async clear(condition: Condition): Promise<void> {
    const id = this.raised.get(condition.key) ?? this.openAlert(condition);
    if (!id) return;
    await this.notifications.resolve(id, SYSTEM);
    this.raised.delete(condition.key);
    this.logger.info("self-monitoring resolved an alert", {condition: condition.key, notification_id: id});
  }

  private async pageJournalOutage(): Promise<void> {
    if (this.pagedJournalOutage) return;
    const message = "Klaxon gateway: the journal cannot commit (disk full or failing); new alerts are refused with 503 until it recovers";
    this.logger.error("self-monitoring: the journal cannot commit; paging out of band", {});
    for (const member of this.members()) {
      for (const channel of OUT_OF_BAND_ORDER) {
        const driver = this.registry.get(channel);
        const contact = member[CHANNEL_CONTACT[channel]];
        if (!driver || !contact || this.channelStatus.gatewayChannel(channel).reason !== null) continue;
        try {
          const result = await driver.deliver(
            {
              channel,
              recipient: {uuid: member.uuid, name: member.name},
              contact,
              alerts: [{notification_id: "klaxon:journal", priority: this.settings.priority, message, source: SOURCE, link: null}],
              // Nothing to acknowledge: no notification exists for this page.
              acknowledge: async () => {}
            },
            AbortSignal.timeout(OUT_OF_BAND_TIMEOUT_MS)
          );
          this.logger.warn("self-monitoring paged out of band", {channel, recipient_uuid: member.uuid, outcome: result.outcome});
          this.pagedJournalOutage = true;
          break;
        } catch (error) {
          this.logger.error("out-of-band page failed", {channel, recipient_uuid: member.uuid, error: error as Error});
        }
      }
    }
  }

  private members() {
    const recipient = this.recipients.get(this.settings.recipient);
    if (recipient) return [recipient];
    const group = this.groups.get(this.settings.recipient);
    return (group?.members ?? []).map((uuid) => this.recipients.get(uuid)).filter((member) => member !== null);
  }
}
