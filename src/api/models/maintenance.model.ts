import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  Format,
  MaxItems,
  MaxLength,
  MinLength,
  Pattern,
  Required,
  UniqueItems
} from "@tsed/schema";
import {HEARTBEAT_NAME} from "../../domain/heartbeat.js";
import {MAINTENANCE_STATUSES} from "../../domain/maintenance.js";
import {AuditActorModel} from "./admin.model.js";

const MAX_ITEMS = 100;

@AdditionalProperties(false)
export class MaintenanceInputModel {
  @Format("date-time") @Description("When the window begins; now when absent or past") starts_at?: string;
  @Required() @Format("date-time") @Description("When it ends: later than starts_at and than now") ends_at: string;
  @Required() @MinLength(1) @MaxLength(500) @Description("Why, for the people who read the audit later") reason: string;
  @CollectionOf(String)
  @Format("uuid")
  @UniqueItems()
  @MaxItems(MAX_ITEMS)
  @Description("Recipient, group or schedule uuids: alerts sent to them are held")
  targets?: string[];
  @CollectionOf(String)
  @MinLength(1)
  @MaxLength(200)
  @UniqueItems()
  @MaxItems(MAX_ITEMS)
  @Description("Alert sources, compared exactly (a send's `source`; an integration's name or its alert's own source)")
  sources?: string[];
  @CollectionOf(String)
  @MinLength(1)
  @MaxLength(64)
  @UniqueItems()
  @MaxItems(MAX_ITEMS)
  @Description("Integration ids: every alert that comes in through them is held")
  integrations?: string[];
  @CollectionOf(String)
  @Pattern(HEARTBEAT_NAME)
  @UniqueItems()
  @MaxItems(MAX_ITEMS)
  @Description("Heartbeat names: a heartbeat that goes down is recorded and pages only if still down at the end")
  heartbeats?: string[];
}

export class MaintenanceModel {
  @Required() @Format("uuid") uuid: string;
  @Required() @Format("date-time") starts_at: string;
  @Required() @Format("date-time") @Description("Moved to the moment it was ended early") ends_at: string;
  @Required() reason: string;
  @Required() @CollectionOf(String) targets: string[];
  @Required() @CollectionOf(String) sources: string[];
  @Required() @CollectionOf(String) integrations: string[];
  @Required() @CollectionOf(String) heartbeats: string[];
  @Required() @Enum(...MAINTENANCE_STATUSES) @Description("Now, by the gateway's clock") status: string;
  @Required() @Format("date-time") created_at: string;
  @Required() created_by: AuditActorModel;
}

export class MaintenanceListModel {
  @Required() @CollectionOf(MaintenanceModel) items: MaintenanceModel[];
}
