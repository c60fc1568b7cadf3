import type {EventType} from "../domain/vocabulary.js";
import {newId} from "../lib/ids.js";
import type {EventsRepository} from "../store/journal/events.repository.js";
import type {WebhooksRepository} from "../store/config/repositories.js";
import type {AttemptRecord} from "../domain/notification.js";
import type {NotificationView} from "./notification-view.js";
import {isoTimestamp} from "../lib/clock.js";

/**
 * Records lifecycle events (CONTRACT section 7) with one outbox row per subscribed webhook.
 * Called inside the journal transaction of the change the event describes.
 */
export class EventPublisher {
  constructor(
    private readonly events: EventsRepository,
    private readonly webhooks: WebhooksRepository,
    /** Told when deliveries were queued, so the webhook dispatcher wakes without polling. */
    private readonly onQueued: () => void = () => undefined
  ) {}

  emit(type: EventType, notification: NotificationView, nowMs: number, attempt?: Omit<AttemptRecord, "notification_id">): void {
    const id = newId("evt", nowMs);
    const createdAt = isoTimestamp(nowMs);
    const data = attempt ? {notification, attempt} : {notification};
    const body = JSON.stringify({id, type, created_at: createdAt, data});
    const destinations = this.webhooks.subscribersOf(type);
    this.events.append({id, type, notification_id: notification.id, created_at: createdAt, body}, destinations);
    if (destinations.length) this.onQueued();
  }
}
