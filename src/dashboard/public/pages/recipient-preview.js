import {api} from "../lib/api.js";
import {fill, h} from "../lib/dom.js";
import {channelName} from "../lib/format.js";

const ENCODING_NAMES = {
  gsm7: "GSM-7 (160 characters per SMS)",
  ucs2: "UCS-2 (70 characters per SMS: the text has a character GSM-7 lacks)"
};

// The speech as the browser plays it: the WAV the gateway synthesizes with espeak-ng.
function speech(preview) {
  return [
    h("p", {class: "meta"}, "Spoken:"),
    h("blockquote", {class: "preview-script"}, preview.script),
    h("audio", {
      controls: true,
      preload: "metadata",
      src: preview.audio_url,
      "aria-label": `${channelName(preview.channel)} speech`
    })
  ];
}

function channelPart(preview) {
  const heading = h("h5", {}, `${channelName(preview.channel)} to ${preview.contact}`);
  switch (preview.channel) {
    case "email":
      return [
        heading,
        h("p", {class: "meta"}, "Subject: ", h("strong", {}, preview.subject)),
        // Sandboxed: the mail's HTML runs no script and reaches nothing, as in a mail client.
        preview.html
          ? h("iframe", {class: "preview-email", sandbox: "", srcdoc: preview.html, title: "The email as HTML"})
          : null,
        h("details", {}, h("summary", {}, "Plain text part"), h("pre", {class: "preview-text"}, preview.text))
      ];
    case "sms":
      return [
        heading,
        h("pre", {class: "preview-text"}, preview.text),
        h("p", {class: "meta preview-sms-facts"}, `${ENCODING_NAMES[preview.encoding]}; ${preview.parts} SMS`)
      ];
    case "telegram_voice":
      return [heading, h("pre", {class: "preview-text"}, preview.text), speech(preview)];
    default:
      return [heading, speech(preview)];
  }
}

/**
 * "Preview messages" on a recipient's card: what each of their channels would send for a sample
 * alert (POST /api/v1/recipients/{uuid}/preview), loaded when opened. Nothing is sent.
 */
export function recipientPreviewPanel(recipient) {
  const body = h("div", {class: "preview-body", role: "status"});
  const panel = h(
    "details",
    {class: "message-preview"},
    h("summary", {}, "Preview messages", h("span", {class: "visually-hidden"}, ` for ${recipient.name}`)),
    body
  );
  panel.addEventListener("toggle", async () => {
    if (!panel.open || body.childElementCount) return;
    fill(body, h("p", {class: "hint"}, "Building the preview…"));
    try {
      const answer = await api("POST", `/api/v1/recipients/${recipient.uuid}/preview`);
      fill(
        body,
        h(
          "p",
          {class: "hint"},
          `For a sample alert (${answer.sample.priority}, from ${answer.sample.source}: “${answer.sample.message}”). Nothing is sent.`
        ),
        answer.channels.map((preview) =>
          h("section", {class: `preview preview-${preview.channel}`}, channelPart(preview))
        )
      );
    } catch (error) {
      fill(body, h("p", {class: "card-problem", role: "alert"}, error.message));
    }
  });
  return panel;
}
