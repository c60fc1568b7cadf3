import {ManualClock} from "../../src/lib/clock.js";
import {signDelivery} from "../../src/lib/webhook-signing.js";
import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "./gateway.js";

/** An integration as its create answer shows it, secret included. */
export interface CreatedIntegration {
  id: string;
  secret: string;
  url: string;
}

/**
 * The gateway an integrations API test file shares between its tests: a manual clock, a recipient
 * ("Ops on call"), a generic integration paging it, a notifications:send key, and the calls those
 * tests make to the integration's events route. Call `start` from beforeAll.
 */
export function integrationRig() {
  const clock = new ManualClock(Date.parse("2026-03-02T09:00:00.000Z"));
  let gw: TestGateway;
  let generic: CreatedIntegration;
  let sender: string;

  async function start() {
    gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, {clock});
    const target = await createRecipient(gw, {name: "Ops on call"});
    generic = (await gw.call("POST", "/api/v1/integrations", {body: {name: "go-services", kind: "generic", target}}))
      .body;
    sender = (await gw.call("POST", "/api/v1/keys", {body: {name: "go library", scopes: ["notifications:send"]}})).body
      .key;
    return {gw, target, generic, sender};
  }

  const sendEvent = (body: unknown, options: {id?: string; key?: string | null} = {}) =>
    gw.call("POST", eventsPath(options.id ?? generic.id), {
      key: options.key === undefined ? sender : options.key,
      body
    });

  /** A keyless request whose body is sent as exactly the bytes `signed` signs, with the headers given. */
  function sendSigned(body: unknown, headers: Record<string, string>, id = generic.id) {
    return gw.call("POST", eventsPath(id), {
      key: null,
      raw: JSON.stringify(body),
      headers: {"Content-Type": "application/json", ...headers}
    });
  }

  let messages = 0;
  /** Each event its own webhook-id unless one is given: a repeated id is a repeat of the same event. */
  const signed = (
    body: unknown,
    secret = generic.secret,
    atMs = clock.now(),
    messageId = `msg_${atMs}_${++messages}`
  ) => ({...signDelivery({secret}, messageId, atMs, JSON.stringify(body))}) as Record<string, string>;

  return {clock, start, sendEvent, sendSigned, signed};
}

export const eventsPath = (id: string) => `/api/v1/integrations/${id}/events`;

/** Path and query of a keyless events url, to call it on whatever address the gateway serves now. */
export const urlPath = (url: string) => {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
};
