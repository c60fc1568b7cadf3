import {
  AdditionalProperties,
  CollectionOf,
  Default,
  Description,
  Format,
  Integer,
  Max,
  MaxItems,
  MaxLength,
  Min,
  MinItems,
  MinLength,
  Nullable,
  Required,
  UniqueItems
} from "@tsed/schema";

@AdditionalProperties(false)
export class PolicyLevelInputModel {
  @Required()
  @CollectionOf(String)
  @Format("uuid")
  @UniqueItems()
  @MinItems(1)
  @MaxItems(20)
  @Description(
    "Recipient, group and schedule uuids, all paged when the level starts (a schedule: whoever is on call then)"
  )
  targets: string[];
  @Integer()
  @Min(1)
  @Max(1440)
  @Nullable(Number)
  @Description(
    "Minutes from this level's start to the next level's; required on every level but the last (there: before the policy runs again or ends)"
  )
  escalate_after_minutes?: number | null;
}

@AdditionalProperties(false)
export class EscalationPolicyInputModel {
  @Required() @MinLength(1) @MaxLength(128) name: string;
  @Integer()
  @Min(0)
  @Max(10)
  @Default(0)
  @Description("How many more times the whole policy runs while nobody acknowledges")
  repeat?: number;
  @Required()
  @CollectionOf(PolicyLevelInputModel)
  @MinItems(1)
  @MaxItems(10)
  @Description("The levels, in order")
  levels: PolicyLevelInputModel[];
}

export class PolicyLevelModel {
  @Required() @CollectionOf(String) targets: string[];
  @Required() @Nullable(Number) escalate_after_minutes: number | null;
}

export class EscalationPolicyModel {
  @Required() @Format("uuid") uuid: string;
  @Required() name: string;
  @Required() @Integer() repeat: number;
  @Required() @CollectionOf(PolicyLevelModel) levels: PolicyLevelModel[];
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

export class EscalationPolicyPageModel {
  @Required() @CollectionOf(EscalationPolicyModel) items: EscalationPolicyModel[];
  @Required() @Nullable(String) next_cursor: string | null;
}
