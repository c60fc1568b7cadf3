import {CollectionOf, Description, Enum, Required} from "@tsed/schema";

/** A recipient, group, schedule or escalation policy as a name resolves to it. */
export class TargetModel {
  @Required()
  @Enum("recipient", "group", "schedule", "policy")
  @Description("What the target is")
  kind: string;
  @Required() @Description("Its uuid: what recipient_uuid, heartbeats and integrations take") uuid: string;
  @Required() @Description("Its name (a recipient without one: empty)") name: string;
}

export class TargetListModel {
  @Required() @CollectionOf(TargetModel) items: TargetModel[];
}
