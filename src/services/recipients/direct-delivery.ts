import type {ChannelDriver, Delivery, DeliveryResult} from "../../channels/channel.js";

/**
 * Runs one delivery straight through a driver to its end, as the escalation's channel queue does,
 * for messages no notification stands behind (test pages, hand-off notices): cut off after
 * `timeoutMs`, a throw turned into a failed outcome, and a later confirmation (an SMS delivery
 * report) awaited within the same time.
 */
export async function deliverDirect(
  driver: ChannelDriver,
  delivery: Delivery,
  timeoutMs: number
): Promise<DeliveryResult> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`no outcome within ${Math.round(timeoutMs / 1000)} s`)),
    timeoutMs
  );
  try {
    const result = await driver.deliver(delivery, controller.signal);
    if (!result.confirmation) return result;
    const confirmed = await Promise.race([result.confirmation, aborted(controller.signal)]);
    // Still carrying its confirmation, a `sent` reads as awaited and unconfirmed.
    return confirmed ?? {...result, detail: `${result.detail ?? "sent"}; no delivery report came in time`};
  } catch (error) {
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : error;
    return {outcome: "failed", detail: reason instanceof Error ? reason.message : String(reason)};
  } finally {
    clearTimeout(timer);
  }
}

function aborted(signal: AbortSignal): Promise<null> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(null), {once: true}));
}
