/** Where the dashboard is served; `/` redirects here. */
export const DASHBOARD_PATH = "/dashboard";

/**
 * The dashboard's list of the alerts sent to one recipient: where a page that names only part of
 * an alert storm sends the person for the rest. Null without a public URL (nobody could open it).
 */
export function recipientAlertsLink(publicUrl: string, recipientUuid: string): string | null {
  const base = publicUrl.trim().replace(/\/+$/, "");
  if (!base) return null;
  return `${base}${DASHBOARD_PATH}/#/notifications?recipient_uuid=${encodeURIComponent(recipientUuid)}`;
}
