import {api, listAll} from "../lib/api.js";
import {announce, badge, emptyState, fill, h, pageHeading} from "../lib/dom.js";
import {confirmedAction} from "../lib/actions.js";
import {field, select, submitting} from "../lib/forms.js";
import {currentUser} from "../lib/session.js";
import {ROLES} from "../lib/format.js";

const ROLE_HINTS = {
  admin: "admin: everything, including users, keys and integrations",
  operator: "operator: acknowledge and resolve, maintenance windows, schedule overrides, test pages",
  viewer: "viewer: read only"
};

const roleOptions = () => ROLES.map((role) => [role, ROLE_HINTS[role]]);

function recipientOptions(recipients) {
  return [["", "nobody (acknowledges under the user's own name)"], ...recipients.map((r) => [r.uuid, r.name])];
}

/** The role and recipient of a user, or of a new one (with a name and a first password). */
function userForm(user, recipients, onDone) {
  const form = h(
    "form",
    {novalidate: true, class: user ? "user-edit" : "card editor new-user"},
    user ? null : h("h2", {}, "New user"),
    user ? null : field({label: "Name", name: "name", autocomplete: "off", hint: "What they sign in with"}),
    select({label: "Role", name: "role", options: roleOptions(), value: user?.role ?? "operator"}),
    select({
      label: "Is recipient",
      name: "recipient_uuid",
      options: recipientOptions(recipients),
      value: user?.recipient_uuid ?? "",
      hint: "Their dashboard acknowledgements are recorded under this recipient's name"
    }),
    user ? null : field({label: "Password", name: "password", type: "password", autocomplete: "new-password"}),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "button primary"}, user ? "Save" : "Create user"))
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {role: form.elements.role.value, recipient_uuid: form.elements.recipient_uuid.value || null};
    const result = await submitting(form, () =>
      user
        ? api("PATCH", `/api/v1/users/${user.id}`, body)
        : api("POST", "/api/v1/users", {
            ...body,
            name: form.elements.name.value.trim(),
            password: form.elements.password.value
          })
    );
    if (result.ok) onDone(result.value);
  });
  return form;
}

/** An admin sets another user's password (they forgot it): their open sessions end. */
function passwordForm(user, onDone) {
  const form = h(
    "form",
    {novalidate: true, class: "user-password"},
    field({label: `New password for ${user.name}`, name: "password", type: "password", autocomplete: "new-password"}),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "button"}, "Set password"))
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const password = form.elements.password.value;
    const result = await submitting(form, () => api("POST", `/api/v1/users/${user.id}/password`, {password}));
    if (result.ok) onDone(result.value);
  });
  return form;
}

/** The dashboard's users: who may sign in, with which role, as which recipient. Admins only. */
export async function usersPage(main) {
  const list = h("div", {class: "stack"});
  const creator = h("div");
  let recipients = [];

  function card(user) {
    const recipient = recipients.find((item) => item.uuid === user.recipient_uuid);
    const self = currentUser()?.id === user.id;
    return h(
      "article",
      {class: "card item user", "data-id": user.id},
      h("div", {class: "card-head"}, h("h2", {}, user.name), badge(user.role)),
      h(
        "p",
        {class: "meta"},
        recipient ? `Acknowledges as the recipient ${recipient.name}` : "Acknowledges under their own name",
        self ? " · this is you" : ""
      ),
      h(
        "details",
        {},
        h("summary", {}, `Change ${user.name}`),
        userForm(user, recipients, async (saved) => {
          announce(`${saved.name} saved`);
          await load();
        }),
        passwordForm(user, (saved) => announce(`New password set for ${saved.name}; their sessions have ended`)),
        h(
          "div",
          {class: "actions"},
          confirmedAction({
            text: `Delete ${user.name}`,
            question: `Delete the user ${user.name}? They are signed out at once.`,
            method: "DELETE",
            path: `/api/v1/users/${user.id}`,
            done: `User ${user.name} deleted`,
            after: load
          })
        )
      )
    );
  }

  async function load() {
    const [users, people] = await Promise.all([api("GET", "/api/v1/users"), listAll("/api/v1/recipients")]);
    recipients = people;
    fill(list, users.items.length ? users.items.map(card) : emptyState("No users."));
    fill(
      creator,
      userForm(null, recipients, async (created) => {
        announce(`User ${created.name} created`);
        await load();
      })
    );
  }

  fill(
    main,
    pageHeading("Users"),
    h(
      "p",
      {class: "hint"},
      "The people who sign in here. A role limits what they can do; a user linked to a recipient acknowledges as that person, and the audit log names them."
    ),
    list,
    creator
  );
  await load();
}
