import type {Clock} from "../../lib/clock.js";
import type {Logger} from "../../lib/logger.js";
import type {ConfigStore} from "../../store/config/config-store.js";
import type {ChannelRegistry} from "../../channels/channel-registry.js";
import {
  CalendarFeedsRepository,
  ContactVerificationsRepository,
  EscalationPoliciesRepository,
  HeartbeatsRepository,
  IntegrationsRepository,
  SchedulesRepository,
  type GroupsRepository,
  type RecipientsRepository
} from "../../store/config/repositories.js";
import type {ContactFailuresRepository} from "../../store/journal/contact-failures.repository.js";
import type {NotificationsRepository} from "../../store/journal/notifications.repository.js";
import type {AuditService} from "../shared/audit.service.js";
import type {ChannelStatusService} from "../shared/channel-status.service.js";
import {CalendarFeeds} from "./calendar-feeds.service.js";
import {GroupsService} from "./groups.service.js";
import {OnCallService} from "./on-call.service.js";
import {PagingReferences} from "./paging-references.js";
import {RecipientsService} from "./recipients.service.js";
import {SchedulesService} from "./schedules.service.js";
import {EscalationPoliciesService} from "./escalation-policies.service.js";
import {TestPageService} from "./test-page.service.js";
import {HandoffNotices} from "./handoff-notices.service.js";
import {TargetNames} from "./target-names.js";
import {MessagePreviewService} from "./message-preview.service.js";
import type {MessagePreviewer} from "../../channels/channel.js";

export interface DirectoryDependencies {
  config: ConfigStore;
  recipients: RecipientsRepository;
  groups: GroupsRepository;
  notifications: NotificationsRepository;
  channelStatus: ChannelStatusService;
  /** The drivers test pages go through. */
  registry: ChannelRegistry;
  contactFailures: ContactFailuresRepository;
  audit: AuditService;
  clock: Clock;
  /** The gateway's public URL, for schedules' feed URLs. */
  publicBase: () => string;
  logger: Logger;
  /** Builds what each channel would send, for recipients' previews. */
  previewer: MessagePreviewer;
}

/**
 * Who can be paged: recipients, groups, on-call schedules and escalation policies, with the repositories they and the
 * paging services read, and the services the API injects (`providers`).
 */
export function createDirectory(deps: DirectoryDependencies) {
  const repositories = {
    recipients: deps.recipients,
    groups: deps.groups,
    schedules: new SchedulesRepository(deps.config),
    heartbeats: new HeartbeatsRepository(deps.config),
    integrations: new IntegrationsRepository(deps.config),
    policies: new EscalationPoliciesRepository(deps.config)
  };
  const {clock, audit, notifications} = deps;
  const pagingReferences = new PagingReferences(
    repositories.heartbeats,
    repositories.integrations,
    repositories.schedules,
    repositories.policies
  );
  const verifications = new ContactVerificationsRepository(deps.config);
  const recipients = new RecipientsService({
    recipients: repositories.recipients,
    groups: repositories.groups,
    notifications,
    channelStatus: deps.channelStatus,
    contactFailures: deps.contactFailures,
    audit,
    clock,
    pagingReferences,
    verifications
  });
  const testPages = new TestPageService({
    recipients: repositories.recipients,
    verifications,
    registry: deps.registry,
    channelStatus: deps.channelStatus,
    audit,
    clock
  });
  const groups = new GroupsService({
    groups: repositories.groups,
    recipients: repositories.recipients,
    notifications,
    audit,
    clock,
    pagingReferences
  });
  const schedules = new SchedulesService({
    ...repositories,
    notifications,
    audit,
    clock,
    pagingReferences,
    publicBase: deps.publicBase
  });
  const policies = new EscalationPoliciesService({
    directory: repositories,
    notifications,
    audit,
    clock,
    pagingReferences
  });
  const onCall = new OnCallService({
    schedules,
    recipients: repositories.recipients,
    groups: repositories.groups,
    audit,
    clock
  });
  const calendarFeeds = new CalendarFeeds({
    schedules,
    onCall,
    feeds: new CalendarFeedsRepository(deps.config),
    recipients: repositories.recipients,
    audit,
    clock,
    publicBase: deps.publicBase
  });
  const handoffNotices = new HandoffNotices({
    ...repositories,
    registry: deps.registry,
    channelStatus: deps.channelStatus,
    audit,
    clock,
    logger: deps.logger.child({component: "handoff-notices"})
  });
  const targetNames = new TargetNames([
    {kind: "recipient", entries: () => repositories.recipients.all()},
    {kind: "group", entries: () => repositories.groups.all()},
    {kind: "schedule", entries: () => repositories.schedules.all()},
    {kind: "policy", entries: () => repositories.policies.all()}
  ]);
  return {
    repositories,
    recipients,
    groups,
    schedules,
    policies,
    onCall,
    targetNames,
    /** The loop that tells people coming on shift (started once the gateway serves). */
    handoffNotices,
    providers: [
      {token: RecipientsService, use: recipients},
      {token: GroupsService, use: groups},
      {token: SchedulesService, use: schedules},
      {token: EscalationPoliciesService, use: policies},
      {token: OnCallService, use: onCall},
      {token: CalendarFeeds, use: calendarFeeds},
      {token: TestPageService, use: testPages},
      {token: TargetNames, use: targetNames},
      {
        token: MessagePreviewService,
        use: new MessagePreviewService({recipients: repositories.recipients, previewer: deps.previewer, clock})
      }
    ]
  };
}
