import {afterAll, beforeAll, expect, it} from "vitest";
import {createRecipient, journalCounts, startTestGateway, type TestGateway} from "../support/gateway.js";
import {browserOn, signInThroughPage} from "./support/browser.js";
import {setAdminPassword} from "./support/dashboard-client.js";

// A box with no modem, no SMTP server and no bot: the preview needs none of them (issue 33).
let gw: TestGateway;
let session: Awaited<ReturnType<typeof browserOn>>;
let maria: string;

beforeAll(async () => {
  gw = await startTestGateway();
  maria = await createRecipient(gw, {name: "Maria Schmidt", email: "maria@factory.lan", telegram_id: "4242"});
  await setAdminPassword(gw);
  session = await browserOn(gw);
});
afterAll(() => session?.close());

it("previews every channel's message for a sample alert through the API, and sends nothing", async () => {
  const before = await journalCounts(gw);
  const answer = await gw.call("POST", `/api/v1/recipients/${maria}/preview`);
  expect(answer.status).toBe(200);
  const byChannel = Object.fromEntries(answer.body.channels.map((preview: any) => [preview.channel, preview]));
  expect(Object.keys(byChannel).sort()).toEqual(["email", "sms", "telegram_voice", "voice_call"]);
  expect(byChannel.email).toMatchObject({
    contact: "maria@factory.lan",
    subject: expect.stringContaining("Press 7 hydraulic oil over 80 °C"),
    html: expect.stringContaining("Press 7 hydraulic oil over 80 °C"),
    text: expect.stringContaining("Press 7 hydraulic oil over 80 °C")
  });
  // "°" is not in GSM-7: the SMS goes as UCS-2, 70 characters a part.
  expect(byChannel.sms).toMatchObject({
    encoding: "ucs2",
    parts: 2,
    text: expect.stringMatching(/^Klaxon CRITICAL from plc-7/)
  });
  expect(byChannel.voice_call.script).toMatch(/^Klaxon alert\. Critical\. From plc-7\. .*Press 1 to acknowledge/);
  expect(byChannel.telegram_voice.text).toContain("Press 7 hydraulic oil over 80 °C");
  const wav = await fetch(`${gw.url}${byChannel.voice_call.audio_url}`, {headers: {"X-API-Key": gw.adminKey}});
  expect(wav.headers.get("content-type")).toBe("audio/wav");
  expect(
    Buffer.from(await wav.arrayBuffer())
      .subarray(0, 4)
      .toString()
  ).toBe("RIFF");
  expect(await journalCounts(gw)).toEqual(before);
  expect((await gw.call("POST", "/api/v1/recipients/6f1c0000-0000-4000-8000-000000000000/preview")).status).toBe(404);
});

it("shows the preview on the recipient's card: the mail as HTML, the SMS's encoding and parts, the call's speech playable", async () => {
  const {page} = session;
  await signInThroughPage(page, gw.url, "recipients");
  const card = page.locator("article", {has: page.getByRole("heading", {name: "Maria Schmidt"})});
  await card.locator("summary", {hasText: "Preview messages"}).click();
  const mail = card.frameLocator("iframe.preview-email");
  await expect.poll(() => mail.locator("body").textContent()).toContain("Press 7 hydraulic oil over 80 °C");
  // The mail's own inline styles apply in the preview (the dashboard's CSP once blocked them): the
  // priority badge is on its red, as in the person's mail client.
  const badge = mail.locator("span", {hasText: "CRITICAL"}).first();
  expect(
    await badge.evaluate((span: any) => span.ownerDocument.defaultView.getComputedStyle(span).backgroundColor)
  ).not.toBe("rgba(0, 0, 0, 0)");
  expect(await card.locator(".preview-sms-facts").textContent()).toBe(
    "UCS-2 (70 characters per SMS: the text has a character GSM-7 lacks); 2 SMS"
  );
  const call = card.locator(".preview-voice_call audio");
  // The browser fetched and decoded the WAV: it knows how long the speech lasts.
  await expect.poll(() => call.evaluate((audio: any) => audio.duration), {timeout: 20_000}).toBeGreaterThan(1);
  expect(session.outside).toEqual([]);
  expect(session.scriptErrors).toEqual([]);
});
