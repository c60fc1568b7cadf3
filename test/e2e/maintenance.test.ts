import {describe, expect, it} from "vitest";
import {emailRig, stopEmailRigs} from "../channels/email-rig.js";

// A planned shutdown end to end, with the production email driver and a real SMTP peer on
// loopback: a maintenance window on Line 3's integration holds its alert (nobody is emailed)
// while an alert from elsewhere still goes out, and ending the window early emails the held
// alert that is still firing.
stopEmailRigs();

describe("maintenance window, end to end", () => {
  it("silences the covered integration alert, and nothing else, until the window is ended", async () => {
    const rig = await emailRig();
    const {gw, peer} = rig;
    const lineLead = await rig.recipient({name: "Line 3 lead", email: "line3@factory.lan"});
    const pressLead = await rig.recipient({name: "Press lead", email: "press@factory.lan"});
    const integration = await gw.call("POST", "/api/v1/integrations", {
      body: {name: "line-3-plc", kind: "generic", target: lineLead}
    });
    expect(integration.status).toBe(201);
    const window = await gw.call("POST", "/api/v1/maintenance", {
      body: {
        ends_at: new Date(Date.now() + 3_600_000).toISOString(),
        reason: "Line 3 retooling",
        integrations: [integration.body.id]
      }
    });
    expect(window.status).toBe(201);

    const fired = await gw.call("POST", `/api/v1/integrations/${integration.body.id}/events`, {
      body: {alert_id: "conveyor", action: "fire", title: "Line 3 conveyor stopped", severity: "critical"}
    });
    const held = fired.body.results[0].notification_uuid;
    expect(await rig.notification(held)).toMatchObject({status: "suppressed", attempts: []});

    const elsewhere = await rig.send(pressLead, {message: "Press 7 oil temperature high"});
    const pressMail = await peer.next();
    expect(pressMail.envelope.to).toEqual(["press@factory.lan"]);
    expect((await rig.notification(elsewhere)).attempts).toHaveLength(1);
    expect(await rig.notification(held)).toMatchObject({status: "suppressed", attempts: []});
    expect(peer.messages.map((mail) => mail.envelope.to)).toEqual([["press@factory.lan"]]);

    const ended = await gw.call("POST", `/api/v1/maintenance/${window.body.uuid}/end`);
    expect(ended.body.status).toBe("ended");
    const released = await peer.next();
    expect(released.envelope.to).toEqual(["line3@factory.lan"]);
    expect(released.subject).toContain("Line 3 conveyor stopped");
    const paged = await rig.notification(held);
    expect(paged.status).toBe("notifying");
    expect(paged.attempts).toMatchObject([{channel: "email", step: 1, outcome: "delivered"}]);
  });
});
