import {api} from "../lib/api.js";
import {announce, badge, fill, h} from "../lib/dom.js";
import {channelName, when} from "../lib/format.js";

// The contact field behind each channel, as the recipient record has it (domain/recipient.ts).
const CONTACT_FIELD = {telegram_voice: "telegram_id", voice_call: "phone", sms: "phone", email: "email"};

function verifiedMarker(state) {
  return state.verified_at
    ? h("span", {class: "verified"}, badge("delivered", "verified"), ` ${when(state.verified_at)}`)
    : badge("unverified", "never verified");
}

function outcomeLine(result) {
  return h(
    "li",
    {},
    `${channelName(result.channel)}${result.contact ? ` ${result.contact}` : ""}: `,
    badge(result.outcome),
    result.detail ? ` ${result.detail}` : ""
  );
}

/**
 * Test pages for one recipient: whether each contact has ever passed a test, a "Send test" button
 * for every channel at once and one per channel, and the outcome of the last test.
 */
export function recipientTestPanel(recipient) {
  const states = recipient.channels.filter((state) => recipient[CONTACT_FIELD[state.channel]]);
  const list = h("ul", {class: "nested test-contacts"});
  const outcome = h("div", {class: "test-outcome", role: "status"});

  function showStates() {
    fill(
      list,
      states.map((state) =>
        h(
          "li",
          {"data-channel": state.channel},
          `${channelName(state.channel)}: `,
          verifiedMarker(state),
          " ",
          testButton(state.channel, `Test ${channelName(state.channel)}`, ` for ${recipient.name}`)
        )
      )
    );
  }

  async function send(channel) {
    // One test at a time: the answer can take as long as a phone rings.
    for (const button of panel.querySelectorAll("button")) button.disabled = true;
    fill(outcome, h("p", {class: "hint"}, "Sending the test and waiting for the channel's answer…"));
    try {
      const answer = await api("POST", `/api/v1/recipients/${recipient.uuid}/test`, {channel});
      for (const result of answer.results) {
        const state = states.find((candidate) => candidate.channel === result.channel);
        if (state && result.verified_at) state.verified_at = result.verified_at;
      }
      fill(outcome, h("ul", {class: "nested"}, answer.results.map(outcomeLine)));
      announce(`Test page for ${recipient.name} finished.`);
    } catch (error) {
      fill(outcome, h("p", {class: "card-problem", role: "alert"}, error.message));
    } finally {
      showStates();
      allButton.disabled = false;
    }
  }

  function testButton(channel, label, hiddenLabel, size = "small") {
    return h(
      "button",
      {type: "button", class: `button ${size}`, "data-needs": "operate", onclick: () => void send(channel)},
      label,
      h("span", {class: "visually-hidden"}, hiddenLabel)
    );
  }

  const allButton = testButton("all", "Send test", ` to ${recipient.name}`, "");
  const panel = h(
    "div",
    {class: "test-page"},
    h("h4", {}, "Contacts and test pages"),
    list,
    h("p", {}, allButton),
    outcome
  );
  showStates();
  return states.length ? panel : null;
}
