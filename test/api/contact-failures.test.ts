import {afterEach, describe, expect, it} from "vitest";
import {ALL_CHANNELS_CONFIGURED, createRecipient, startTestGateway, type TestGateway} from "../support/gateway.js";
import {RecordingDriver} from "../support/recording-driver.js";

let gw: TestGateway | null = null;
afterEach(async () => {
  await gw?.stop();
  gw = null;
});

describe("a contact a channel reported unreachable", () => {
  it("shows on the recipient, masked, until the contact is corrected", async () => {
    const email = new RecordingDriver("email", 1, {
      kind: "fail",
      message: "550 5.1.1 mailbox unavailable",
      permanent: true
    });
    gw = await startTestGateway(ALL_CHANNELS_CONFIGURED, {drivers: () => [email]});
    const recipient = await createRecipient(gw, {phone: null, email: "maria@factory.lan", channel_order: ["email"]});
    expect((await gw.call("GET", `/api/v1/recipients/${recipient}`)).body.contact_failures).toEqual([]);

    expect(
      (
        await gw.call("POST", "/api/v1/notifications/send", {
          body: {recipient_uuid: recipient, message: "press 4 stopped", priority: "high"}
        })
      ).status
    ).toBe(202);
    await gw.gateway.services.runner.idle();
    const view = (await gw.call("GET", `/api/v1/recipients/${recipient}`)).body;
    expect(view.contact_failures).toEqual([
      {
        channel: "email",
        contact: "m****@factory.lan",
        reason: expect.stringContaining("550 5.1.1 mailbox unavailable"),
        at: expect.any(String)
      }
    ]);
    // The list shows the same view.
    const listed = (await gw.call("GET", "/api/v1/recipients")).body.items.find(
      (item: {uuid: string}) => item.uuid === recipient
    );
    expect(listed.contact_failures).toEqual(view.contact_failures);

    const corrected = await gw.call("PATCH", `/api/v1/recipients/${recipient}`, {
      body: {email: "maria.schmidt@factory.lan"},
      headers: {"Content-Type": "application/merge-patch+json"}
    });
    expect(corrected.status).toBe(200);
    expect(corrected.body.contact_failures).toEqual([]);
  });
});
