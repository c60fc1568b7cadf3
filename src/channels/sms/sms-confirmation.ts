import type {SmsDeliveryReport} from "../../modem/sms-status-reports.js";
import type {LateConfirmation} from "../channel.js";

/**
 * One confirmation for a message sent in parts, each with its own status report: delivered once
 * every part is, failed as soon as one part is (the reader is missing a piece), otherwise null
 * (a part had no report within the modem's limit). `stop` ends the wait with null at once.
 * Never rejects.
 */
export function confirmParts(
  reports: Promise<SmsDeliveryReport | null>[],
  stop: AbortSignal
): Promise<LateConfirmation | null> {
  return new Promise((resolve) => {
    const finish = (confirmation: LateConfirmation | null) => {
      stop.removeEventListener("abort", onStop);
      resolve(confirmation);
    };
    const onStop = () => finish(null);
    if (stop.aborted) return finish(null);
    stop.addEventListener("abort", onStop, {once: true});
    const delivered: string[] = [];
    let settled = 0;
    reports.forEach((report, index) => {
      void report.then((result) => {
        settled += 1;
        if (result?.outcome === "failed")
          return finish({
            outcome: "failed",
            detail: reports.length > 1 ? `part ${index + 1} of ${reports.length}: ${result.detail}` : result.detail
          });
        if (result) delivered.push(result.detail);
        if (settled < reports.length) return;
        finish(delivered.length === reports.length ? {outcome: "delivered", detail: summary(delivered)} : null);
      });
    });
  });
}

function summary(details: string[]): string {
  if (details.length === 1) return details[0];
  const distinct = [...new Set(details)];
  return `all ${details.length} parts: ${distinct.join("; ")}`;
}
