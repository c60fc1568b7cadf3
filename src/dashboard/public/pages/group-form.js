import {api} from "../lib/api.js";
import {h} from "../lib/dom.js";
import {checkedValues, field, orderedChecklist, select, submitting} from "../lib/forms.js";

/** The group editor: name, strategy and members in paging order. */
export function groupForm(group, recipients, onDone) {
  const form = h(
    "form",
    {novalidate: true, class: "card editor"},
    field({label: "Name", name: "name", value: group?.name, autocomplete: "off"}),
    select({
      label: "Strategy",
      name: "strategy",
      value: group?.strategy ?? "sequential",
      options: [
        ["sequential", "Sequential: one member at a time"],
        ["parallel", "Parallel: every member each step"]
      ]
    }),
    recipients.length
      ? orderedChecklist({
          legend: "Members, in paging order",
          name: "members",
          options: recipients.map((recipient) => [recipient.uuid, recipient.name]),
          checked: group?.members ?? []
        })
      : h("p", {class: "notice"}, "Create recipients first; a group pages recipients."),
    h(
      "div",
      {class: "actions"},
      h("button", {type: "submit", class: "button primary"}, group ? "Save changes" : "Create group"),
      h("button", {type: "button", class: "button", onclick: () => onDone(null)}, "Cancel")
    )
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      name: form.elements.name.value.trim(),
      strategy: form.elements.strategy.value,
      members: checkedValues(form, "members")
    };
    const result = await submitting(form, () =>
      group ? api("PATCH", `/api/v1/groups/${group.uuid}`, body) : api("POST", "/api/v1/groups", body)
    );
    if (result.ok) onDone(result.value);
  });
  return form;
}
