import {CHANNEL_CONTACT} from "../../domain/recipient.js";
import type {Channel, Priority} from "../../domain/vocabulary.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {ChannelRegistry} from "../../channels/channel-registry.js";
import {StorageUnavailableError, type Journal} from "../../store/journal/journal.js";
import type {EventsRepository} from "../../store/journal/events.repository.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {EscalationsRepository} from "../../store/journal/escalations.repository.js";
import {withAuditFindings, type PagingAuditRepository} from "../../store/journal/paging-audit.repository.js";
import {SYSTEM_ACTOR} from "../../domain/actor.js";
import type {GroupsRepository, RecipientsRepository, SchedulesRepository} from "../../store/config/repositories.js";
import type {ChannelStatusService} from "../shared/channel-status.service.js";
import type {NotificationsService} from "../notifications/notifications.service.js";
import {
  othersWaiting,
  selfCheck,
  type Condition,
  type ReplicationHealth,
  type SelfMonitorLimits
} from "./self-monitor-conditions.js";
import {upcomingGaps} from "./schedule-gaps.js";

export interface SelfMonitorSettings extends SelfMonitorLimits {
  /** Recipient or group uuid; empty turns self-monitoring off. */
  recipient: string;
  priority: Priority;
}

const SOURCE = "klaxon";
// With no journal nothing can be accepted, so the out-of-band page goes straight to a driver,
// cheapest and least dependent first: SMS needs neither the disk nor the internet.
const OUT_OF_BAND_ORDER: Channel[] = ["sms", "voice_call", "email", "telegram_voice"];
const OUT_OF_BAND_TIMEOUT_MS = 3 * 60_000;
const DEDUP_PREFIX = "klaxon:";
// How many of the admin's open and acknowledged alerts (newest first) are searched at start for
// the earlier run's own: those are a handful, near the top.
const ADOPT_LIMIT = 1000;

export const dedupKeyOf = (condition: Pick<Condition, "key">) => `${DEDUP_PREFIX}${condition.key}`;

/** What SelfMonitorService works with, by name. */
export interface SelfMonitorDeps {
  settings: SelfMonitorSettings;
  journal: Journal;
  notifications: NotificationsService;
  notificationRecords: NotificationsRepository;
  escalations: EscalationsRepository;
  auditFindings: PagingAuditRepository;
  events: EventsRepository;
  channelStatus: ChannelStatusService;
  registry: ChannelRegistry;
  recipients: RecipientsRepository;
  groups: GroupsRepository;
  schedules: SchedulesRepository;
  clock: Clock;
  logger: Logger;
  /** The standby as this box sees it when it is the active of two; null otherwise. */
  replication: () => ReplicationHealth | null;
}

/**
 * The gateway watching its own paging path. Each condition (selfCheck) raises one alert to the
 * configured admin recipient through the normal escalation, which skips channels that are down,
 * so it arrives over whichever channel still works; it carries the dedup key `klaxon:<key>`, is
 * raised once per episode (an acknowledged one is not raised again while the problem lasts) and
 * is resolved when the condition clears. Alerts that cannot reach anyone are a condition per
 * cause (channel and reason), so the admin hears once about each thing to fix.
 *
 * A journal that cannot commit (disk full) cannot accept an alert either: that one is paged
 * out of band, one delivery straight through a driver per outage, recorded only in the log.
 */
export class SelfMonitorService {
  /** Conditions with an alert raised (or adopted from an earlier run), and that alert's id. */
  private readonly raised = new Map<string, string>();
  private adopted = false;
  private pagedJournalOutage = false;

  constructor(private readonly deps: SelfMonitorDeps) {}

  get enabled(): boolean {
    return this.deps.settings.recipient !== "";
  }

  /** One pass: checks the journal first (everything else needs it), then every condition. */
  async tick(): Promise<void> {
    if (!this.enabled) return;
    if (!(await this.journalCommits())) {
      await this.pageJournalOutage();
      return;
    }
    if (this.pagedJournalOutage) this.deps.logger.info("self-monitoring: the journal commits again");
    this.pagedJournalOutage = false;
    if (!this.adopted) this.adoptEarlierAlerts();
    const own = new Set(this.raised.values());
    const {outbox, undeliverable} = this.deps.journal.read(() => ({
      outbox: this.deps.events.backlog(),
      undeliverable: othersWaiting(
        withAuditFindings(
          this.deps.escalations.undeliverable(),
          // Its own page, found stuck by the auditor, would keep its own condition alive.
          this.deps.auditFindings.findings().filter((finding) => !own.has(finding.notification_id))
        ).reasons,
        [...own].map((id) => this.deps.escalations.forNotification(id)?.waiting_for ?? [])
      )
    }));
    const conditions = selfCheck(
      {
        channels: this.deps.registry.all().map((driver) => this.deps.channelStatus.gatewayChannel(driver.channel)),
        outbox,
        undeliverable,
        scheduleGaps: upcomingGaps(this.deps.schedules, this.deps.clock.now()),
        replication: this.deps.replication(),
        nowMs: this.deps.clock.now()
      },
      this.deps.settings
    );
    const problems = conditions.filter(
      (condition): condition is Condition & {problem: string} => condition.problem !== null
    );
    // A cause that is no longer reported (an undeliverable cause that cleared) is over, like a condition reported healthy.
    const cleared = [...this.raised.keys()].filter((key) => !problems.some((condition) => condition.key === key));
    const steps = [
      ...problems.map((condition) => ({key: condition.key, run: () => this.raise(condition)})),
      ...cleared.map((key) => ({key, run: () => this.clear(key)}))
    ];
    for (const step of steps) {
      try {
        await step.run();
      } catch (error) {
        this.deps.logger.error("self-monitoring could not raise or resolve an alert", {
          condition: step.key,
          error: error as Error
        });
      }
    }
  }

  private async journalCommits(): Promise<boolean> {
    try {
      await this.deps.journal.probe(isoTimestamp(this.deps.clock.now()));
      return true;
    } catch (error) {
      if (error instanceof StorageUnavailableError) return false;
      throw error;
    }
  }

  /**
   * After a restart the alerts of an earlier run may still be open or acknowledged (an episode
   * not over): adopt them instead of paging again, and resolve them when their cause is gone.
   */
  private adoptEarlierAlerts(): void {
    const open = this.deps.journal.read(() =>
      (["queued", "notifying", "acknowledged"] as const).flatMap((status) =>
        this.deps.notificationRecords.list({status, target_uuid: this.deps.settings.recipient, limit: ADOPT_LIMIT})
      )
    );
    for (const alert of open) {
      if (alert.source === SOURCE && alert.dedup_key?.startsWith(DEDUP_PREFIX))
        this.raised.set(alert.dedup_key.slice(DEDUP_PREFIX.length), alert.id);
    }
    this.adopted = true;
  }

  private async raise(condition: Condition & {problem: string}): Promise<void> {
    if (this.raised.has(condition.key)) return;
    const problem = condition.problem;
    const {view} = await this.deps.notifications.send(
      {
        recipient_uuid: this.deps.settings.recipient,
        message: `Klaxon gateway: ${problem}`,
        priority: this.deps.settings.priority,
        source: SOURCE,
        dedup_key: dedupKeyOf(condition)
      },
      SYSTEM_ACTOR
    );
    const id = view.id;
    this.raised.set(condition.key, id);
    this.deps.logger.warn("self-monitoring raised an alert", {condition: condition.key, problem, notification_id: id});
  }

  private async clear(key: string): Promise<void> {
    const id = this.raised.get(key) as string;
    await this.deps.notifications.resolve(id, SYSTEM_ACTOR);
    this.raised.delete(key);
    this.deps.logger.info("self-monitoring resolved an alert", {condition: key, notification_id: id});
  }

  private async pageJournalOutage(): Promise<void> {
    if (this.pagedJournalOutage) return;
    const message =
      "Klaxon gateway: the journal cannot commit (disk full or failing); new alerts are refused with 503 until it recovers";
    this.deps.logger.error("self-monitoring: the journal cannot commit; paging out of band", {});
    for (const member of this.members()) {
      for (const channel of OUT_OF_BAND_ORDER) {
        const driver = this.deps.registry.get(channel);
        const contact = member[CHANNEL_CONTACT[channel]];
        if (!driver || !contact || this.deps.channelStatus.gatewayChannel(channel).reason !== null) continue;
        try {
          const result = await driver.deliver(
            {
              channel,
              recipient: {uuid: member.uuid, name: member.name},
              contact,
              alerts: [
                {
                  notification_id: "klaxon:journal",
                  priority: this.deps.settings.priority,
                  message,
                  source: SOURCE,
                  link: null
                }
              ],
              // Nothing to acknowledge: no notification exists for this page.
              acknowledge: async () => {}
            },
            AbortSignal.timeout(OUT_OF_BAND_TIMEOUT_MS)
          );
          this.deps.logger.warn("self-monitoring paged out of band", {
            channel,
            recipient_uuid: member.uuid,
            outcome: result.outcome
          });
          this.pagedJournalOutage = true;
          break;
        } catch (error) {
          this.deps.logger.error("out-of-band page failed", {
            channel,
            recipient_uuid: member.uuid,
            error: error as Error
          });
        }
      }
    }
  }

  private members() {
    const recipient = this.deps.recipients.get(this.deps.settings.recipient);
    if (recipient) return [recipient];
    const group = this.deps.groups.get(this.deps.settings.recipient);
    return (group?.members ?? []).map((uuid) => this.deps.recipients.get(uuid)).filter((member) => member !== null);
  }
}
