import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  MaxLength,
  MinItems,
  MinLength,
  Nullable,
  Required,
  UniqueItems
} from "@tsed/schema";
import {SCOPES} from "../../domain/vocabulary.js";
import {ACTOR_TYPES} from "../../domain/actor.js";

@AdditionalProperties(false)
export class CreateKeyModel {
  @Required()
  @MinLength(1)
  @MaxLength(128)
  @Description("What the key is for, e.g. the integration's name")
  name: string;
  @Required() @CollectionOf(String) @Enum(...SCOPES) @MinItems(1) @UniqueItems() scopes: string[];
  @MinLength(1)
  @MaxLength(128)
  @Nullable(String)
  @Description("Who the key belongs to (a person or a team), shown beside its name in the audit log")
  owner?: string | null;
}

export class KeyModel {
  @Required() @Description("Public id: the 8 characters after klx_") id: string;
  @Required() name: string;
  @Required() @CollectionOf(String) scopes: string[];
  @Required() created_at: string;
  @Required() @Nullable(String) created_by: string | null;
  @Required() @Nullable(String) revoked_at: string | null;
  @Required() @Nullable(String) last_used_at: string | null;
  @Required() @Nullable(String) owner: string | null;
}

export class CreatedKeyModel extends KeyModel {
  // Not required: an idempotent replay of the create leaves the key out (docs/api.md, "Idempotent creates").
  @Description("The whole key. Shown only in the first answer to the create (a replay leaves it out); store it now.")
  key?: string;
}

export class KeyListModel {
  @Required() @CollectionOf(KeyModel) items: KeyModel[];
}

export class AuditActorModel {
  @Required() @Enum(...ACTOR_TYPES) type: string;
  @Required() @Nullable(String) id: string | null;
  @Required()
  @Nullable(String)
  @Description(
    "Who that is: the user's, key's (with its owner), recipient's or integration's name; null when unknown or deleted"
  )
  name: string | null;
}

export class AuditSubjectModel {
  @Required() type: string;
  @Required() id: string;
}

export class AuditEntryModel {
  @Required() seq: number;
  @Required() at: string;
  @Required() actor: AuditActorModel;
  @Required() @Description("e.g. notification.accepted, notification.acknowledged, recipient.updated") action: string;
  @Required() subject: AuditSubjectModel;
  @Required() @Nullable(String) source: string | null;
  @Required() detail: Record<string, unknown>;
}

export class AuditPageModel {
  @Required() @CollectionOf(AuditEntryModel) items: AuditEntryModel[];
  @Required() @Nullable(String) next_cursor: string | null;
}
