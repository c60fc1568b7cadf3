import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "./gateway.js";

/**
 * The gateway a notifications API test file shares between its tests: every channel configured,
 * one recipient (Alice) with a phone and an e-mail address, and `send` for POST
 * /api/v1/notifications/send. Call `start` from beforeAll.
 */
export function notificationRig() {
  let gw: TestGateway;

  async function start() {
    gw = await startTestGateway(ALL_CHANNELS_CONFIGURED);
    const alice = await createRecipient(gw);
    return {gw, alice};
  }

  const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    gw.call("POST", "/api/v1/notifications/send", {body, headers});

  return {start, send};
}
