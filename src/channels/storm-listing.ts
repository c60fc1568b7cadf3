import {urgencyRank} from "../domain/vocabulary.js";
import type {AlertSummary} from "./channel.js";

/**
 * A written page of an alert storm lists at most this many alerts one by one and counts the rest
 * ("and 650 more", with a link to them all): a 700-alert page must still fit the size limits of
 * mail servers, Telegram and SMS, and nobody reads past the first screens anyway.
 */
export const MAX_LISTED_ALERTS = 50;

/** Most urgent first, then in the order they came. */
export function byUrgency(alerts: AlertSummary[]): AlertSummary[] {
  return alerts
    .map((alert, index) => ({alert, index}))
    .sort((a, b) => urgencyRank(a.alert.priority) - urgencyRank(b.alert.priority) || a.index - b.index)
    .map(({alert}) => alert);
}

/** "and 1 more alert" / "and 650 more alerts". */
export function andMore(count: number): string {
  return `and ${count} more ${count === 1 ? "alert" : "alerts"}`;
}
