import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  Format,
  Integer,
  MaxLength,
  MinItems,
  Nullable,
  Required,
  UniqueItems
} from "@tsed/schema";
import {EVENT_FAMILY_FILTERS, EVENT_TYPES} from "../../domain/vocabulary.js";
import {ALL_EVENTS} from "../../services/webhooks/webhooks.service.js";

/** The writable fields of a subscription: the body of POST, and the result a merge patch must produce. */
@AdditionalProperties(false)
export class WebhookInputModel {
  @Required()
  @Format("uri")
  @MaxLength(2048)
  @Description("Absolute http or https URL that receives the deliveries")
  url: string;
  @Required()
  @CollectionOf(String)
  @Enum(...EVENT_TYPES, ...EVENT_FAMILY_FILTERS, ALL_EVENTS)
  @MinItems(1)
  @UniqueItems()
  @Description(
    `Event types to receive, a family such as "escalation.*" (its types now and later), or ["${ALL_EVENTS}"] for all`
  )
  events: string[];
  @Description(
    "Default true. A disabled subscription gets no new events; what it had queued waits until it is enabled again"
  )
  enabled?: boolean;
}

export class WebhookModel {
  @Required() id: string;
  @Required() url: string;
  @Required() @CollectionOf(String) events: string[];
  @Required() enabled: boolean;
  @Required()
  @Nullable(String)
  @Format("date-time")
  @Description("During a secret rotation, when deliveries stop carrying the previous secret's signature")
  previous_secret_expires_at: string | null;
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

export class WebhookWithSecretModel extends WebhookModel {
  // Not required: an idempotent replay of the create leaves the secret out (docs/api.md, "Idempotent creates").
  @Description(
    "whsec_ + base64 of 32 random bytes, for verifying signatures. Shown only in the first answer to the create (a replay leaves it out); store it now."
  )
  secret?: string;
}

export class WebhookPageModel {
  @Required() @CollectionOf(WebhookModel) items: WebhookModel[];
  @Required() @Nullable(String) next_cursor: string | null;
}

export class WebhookDeliveryModel {
  @Required() @Integer() id: number;
  @Required() subscription_id: string;
  @Required() @Description("Also the webhook-id header: the same on every attempt") event_id: string;
  @Required() @Enum(...EVENT_TYPES) event_type: string;
  @Required() @Integer() @Description("Attempt number for this queued delivery, from 1") attempt: number;
  @Required() @Format("date-time") started_at: string;
  @Required() @Nullable(String) @Description("Null while the request is in flight") finished_at: string | null;
  @Required() @Nullable(Number) @Description("The receiver's HTTP status; null when it did not answer") status_code:
    number | null;
  @Required() @Nullable(String) error: string | null;
  @Required() @Nullable(Number) duration_ms: number | null;
}

export class WebhookDeliveryPageModel {
  @Required() @CollectionOf(WebhookDeliveryModel) items: WebhookDeliveryModel[];
  @Required() @Nullable(String) next_cursor: string | null;
}

export class RedeliveryModel {
  @Required() subscription_id: string;
  @Required() event_id: string;
  @Required() @Format("date-time") queued_at: string;
}
