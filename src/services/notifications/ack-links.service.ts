import type {AckLinkClaims, AckLinkSigner} from "../../lib/ack-link.js";
import {recipientActor} from "../../domain/actor.js";
import type {NotificationsService} from "./notifications.service.js";
import type {NotificationView} from "./notification-view.js";
import {AppError} from "../shared/errors.js";
import {isoTimestamp} from "../../lib/clock.js";

/** One alert as the confirmation page shows it. */
export interface LinkedAlert {
  id: string;
  priority: string;
  message: string;
  source: string | null;
  created_at: string;
  status: NotificationView["status"];
  acknowledged_by: string | null;
  acknowledged_via: NotificationView["acknowledged_via"];
  acknowledged_at: string | null;
}

/** What a valid link names, as the journal has it now. */
export interface LinkedAlerts {
  recipient: AckLinkClaims["recipient"];
  expires_at: string;
  alerts: LinkedAlert[];
  /** The zone the person reads the page's times in, as their email gave them; null: the box's. */
  time_zone: string | null;
}

export interface LinkConfirmation extends LinkedAlerts {
  /** The alerts this confirmation acknowledged (the others were closed already). */
  acknowledged_now: string[];
}

/** Open and exhausted alerts can still be acknowledged (CONTRACT section 3); closed ones cannot. */
export function acknowledgeable(alert: Pick<LinkedAlert, "status">): boolean {
  return alert.status !== "acknowledged" && alert.status !== "resolved";
}

/** Who an email acknowledgement is recorded as: the person the link was mailed to. */
function acknowledgerOf(recipient: AckLinkClaims["recipient"]): string {
  return `${recipient.name} <${recipient.email}>`;
}

/**
 * Acknowledge links from emails. Reading a link (what a mail scanner does) changes nothing;
 * only `confirm`, behind the page's button, acknowledges, as the person it was mailed to.
 */
export class AckLinksService {
  constructor(
    private readonly signer: AckLinkSigner,
    private readonly notifications: NotificationsService
  ) {}

  inspect(token: string): LinkedAlerts {
    const claims = this.claims(token);
    const alerts = this.alertsOf(claims);
    return {
      recipient: claims.recipient,
      expires_at: isoTimestamp(claims.expires_at_ms),
      alerts,
      time_zone: this.zoneOf(claims, alerts)
    };
  }

  async confirm(token: string): Promise<LinkConfirmation> {
    const claims = this.claims(token);
    const before = this.alertsOf(claims);
    const by = acknowledgerOf(claims.recipient);
    await this.notifications.acknowledgeMany(
      before.filter(acknowledgeable).map((alert) => alert.id),
      by,
      "email",
      recipientActor(claims.recipient.uuid)
    );
    const after = this.alertsOf(claims);
    const acknowledgedNow = after
      .filter(
        (alert) =>
          before.some((earlier) => earlier.id === alert.id && acknowledgeable(earlier)) &&
          alert.acknowledged_via === "email" &&
          alert.acknowledged_by === by
      )
      .map((alert) => alert.id);
    return {
      recipient: claims.recipient,
      expires_at: isoTimestamp(claims.expires_at_ms),
      alerts: after,
      time_zone: this.zoneOf(claims, after),
      acknowledged_now: acknowledgedNow
    };
  }

  // One email, one zone: the first of its alerts still in the journal says it.
  private zoneOf(claims: AckLinkClaims, alerts: LinkedAlert[]): string | null {
    const [first] = alerts;
    return first ? this.notifications.readingZone(first.id, claims.recipient.uuid) : null;
  }

  private claims(token: string): AckLinkClaims {
    const check = this.signer.check(token);
    if (check.valid) return check.claims;
    throw check.reason === "expired"
      ? new AppError("ack_link_expired", "this acknowledge link has expired")
      : new AppError(
          "ack_link_invalid",
          "this is not an acknowledge link this gateway made (mistyped, cut short, altered, or its key was replaced)"
        );
  }

  // Alerts that no longer exist (deleted by retention) are left out.
  private alertsOf(claims: AckLinkClaims): LinkedAlert[] {
    return claims.notification_ids.flatMap((id) => {
      try {
        const view = this.notifications.get(id);
        return [
          {
            id: view.id,
            priority: view.priority,
            message: view.message,
            source: view.source,
            created_at: view.created_at,
            status: view.status,
            acknowledged_by: view.acknowledged_by,
            acknowledged_via: view.acknowledged_via,
            acknowledged_at: view.acknowledged_at
          }
        ];
      } catch (error) {
        if (error instanceof AppError && error.code === "not_found") return [];
        throw error;
      }
    });
  }
}
