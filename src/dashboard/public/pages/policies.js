import {api, listAll} from "../lib/api.js";
import {announce, append, copyable, emptyState, fill, h, pageHeading} from "../lib/dom.js";
import {confirmedAction} from "../lib/actions.js";
import {checkboxes, checkedValues, field, numberOf, submitting} from "../lib/forms.js";
import {levelTargetOptions, loadTargets} from "../lib/targets.js";

/** One level's fields: its targets by name (schedules included) and the minutes before the next level. */
function levelFields(index, options, level) {
  return h(
    "fieldset",
    {class: "card level", "data-level": String(index)},
    h("legend", {}, `Level ${index + 1}`),
    checkboxes({
      legend: "Page",
      name: `level-${index}`,
      options,
      checked: level?.targets ?? [],
      pointer: `/levels/${index}/targets`
    }),
    field({
      label: "Minutes before the next level",
      name: `minutes-${index}`,
      pointer: `/levels/${index}/escalate_after_minutes`,
      type: "number",
      min: "1",
      value: level?.escalate_after_minutes == null ? "" : String(level.escalate_after_minutes),
      hint: "Leave empty on the last level"
    })
  );
}

/**
 * A policy's form: a name, how often it runs again, and its levels as a list (added at the end,
 * the last one removable). New, or editing `policy`: alerts already paging keep their levels.
 */
function policyForm(targets, onDone, policy = null) {
  const options = levelTargetOptions(targets);
  const levels = h(
    "div",
    {class: "stack"},
    (policy?.levels ?? [null]).map((level, index) => levelFields(index, options, level))
  );
  const form = h(
    "form",
    {novalidate: true, class: "card editor"},
    field({label: "Name", name: "name", autocomplete: "off", value: policy?.name}),
    field({
      label: "Runs again (repeat)",
      name: "repeat",
      type: "number",
      min: "0",
      value: String(policy?.repeat ?? 0)
    }),
    levels,
    h(
      "div",
      {class: "actions"},
      h(
        "button",
        {
          type: "button",
          class: "button",
          onclick: () => append(levels, [levelFields(levels.children.length, options)])
        },
        "Add level"
      ),
      h(
        "button",
        {
          type: "button",
          class: "button",
          onclick: () => levels.children.length > 1 && levels.lastElementChild.remove()
        },
        "Remove last level"
      ),
      h("button", {type: "submit", class: "button primary"}, policy ? "Save policy" : "Create policy")
    )
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      name: form.elements.name.value.trim(),
      repeat: numberOf(form, "repeat"),
      levels: [...levels.children].map((_, index) => {
        const minutes = form.elements.namedItem(`minutes-${index}`).value.trim();
        return {
          targets: checkedValues(form, `level-${index}`),
          escalate_after_minutes: minutes === "" ? null : numberOf(form, `minutes-${index}`)
        };
      })
    };
    const result = await submitting(form, () =>
      policy
        ? api("PATCH", `/api/v1/escalation-policies/${policy.uuid}`, body)
        : api("POST", "/api/v1/escalation-policies", body)
    );
    if (result.ok) onDone(result.value);
  });
  return form;
}

/** Who a level would page now: a schedule's on-call people, a group's members, a recipient. */
async function pagedNow(uuids, targets) {
  const groups = new Map(targets.groups.map((group) => [group.uuid, group]));
  const schedules = new Set(targets.schedules.map((schedule) => schedule.uuid));
  const names = await Promise.all(
    uuids.map(async (uuid) => {
      if (schedules.has(uuid))
        return (await api("GET", `/api/v1/schedules/${uuid}/on-call`)).recipients.map((person) => person.name);
      if (groups.has(uuid)) return groups.get(uuid).members.map((member) => targets.nameOf(member));
      return [targets.nameOf(uuid)];
    })
  );
  return [...new Set(names.flat())].join(", ") || "nobody";
}

/** Escalation policies: their levels by name, who each level would page now, new policies. */
export async function policiesPage(main) {
  const targets = await loadTargets();
  const list = h("div", {class: "stack"});
  const creator = h("div");

  async function card(policy) {
    const levels = await Promise.all(
      policy.levels.map(async (level, index) =>
        h(
          "li",
          {},
          h("strong", {}, `Level ${index + 1}: `),
          level.targets.map((uuid) => targets.nameOf(uuid)).join(", "),
          h("span", {class: "meta"}, ` · would page now: ${await pagedNow(level.targets, targets)}`),
          level.escalate_after_minutes === null
            ? null
            : h("span", {class: "meta"}, ` · next level after ${level.escalate_after_minutes} min`)
        )
      )
    );
    return h(
      "article",
      {class: "card policy", "data-uuid": policy.uuid},
      h("h2", {}, policy.name),
      h("p", {class: "meta"}, "Send target: ", copyable(policy.uuid, "Copy uuid")),
      h("ol", {class: "levels"}, levels),
      h(
        "p",
        {class: "meta"},
        policy.repeat ? `Runs ${policy.repeat} more time(s) while nobody acknowledges.` : "Runs once."
      ),
      h(
        "details",
        {class: "edit-policy", "data-needs": "admin"},
        h("summary", {}, `Edit ${policy.name}`),
        policyForm(
          targets,
          async (saved) => {
            announce(`Policy ${saved.name} saved; alerts already paging keep the levels they started with`);
            Object.assign(targets.policies.find((item) => item.uuid === saved.uuid) ?? {}, saved);
            await load();
          },
          policy
        )
      ),
      h(
        "div",
        {class: "actions"},
        confirmedAction({
          text: "Delete policy",
          question: `Delete the escalation policy ${policy.name}?`,
          method: "DELETE",
          path: `/api/v1/escalation-policies/${policy.uuid}`,
          done: `Policy ${policy.name} deleted`,
          after: load
        })
      )
    );
  }

  async function load() {
    const policies = await listAll("/api/v1/escalation-policies");
    const cards = await Promise.all(policies.map(card));
    fill(list, cards.length ? cards : emptyState("No escalation policies yet."));
    fill(
      creator,
      h(
        "details",
        {class: "card new-policy", "data-needs": "admin"},
        h("summary", {}, "New escalation policy"),
        policyForm(targets, async (created) => {
          announce(`Policy ${created.name} created`);
          targets.policies.push(created);
          await load();
        })
      )
    );
  }

  fill(
    main,
    pageHeading("Escalation policies"),
    h(
      "p",
      {class: "hint"},
      "Levels paged one after another until someone acknowledges: each level pages all its targets at once (a schedule: whoever is on call when the level starts). A policy's uuid is a target like a recipient's."
    ),
    list,
    creator
  );
  await load();
}
