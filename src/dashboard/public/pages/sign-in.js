import {api} from "../lib/api.js";
import {fill, h, pageHeading, focusHeading} from "../lib/dom.js";
import {field, showProblem, submitting} from "../lib/forms.js";

/**
 * Sign-in by name and password, and with an admin API key: the first admin on first visit
 * (nobody can sign in yet), or a new password for a forgotten one. The key, such as the one the
 * gateway wrote to data/initial-admin-key on first start, keeps anyone else on the network from
 * claiming the box. (An admin can also reset another user's password on the Users page.)
 */
export function signInPage(main, {passwordSet, message, onSignedIn}) {
  const render = (mode) => {
    fill(main, h("div", {class: "sign-in"}, mode === "sign-in" ? signInForm() : setPasswordForm(passwordSet)));
    focusHeading();
  };

  function signInForm() {
    const form = h(
      "form",
      {novalidate: true, class: "card"},
      message ? h("p", {class: "notice", role: "status"}, message) : null,
      field({label: "Name", name: "name", autocomplete: "username", spellcheck: "false", required: true}),
      field({
        label: "Password",
        name: "password",
        type: "password",
        autocomplete: "current-password",
        required: true
      }),
      h("div", {class: "actions"}, h("button", {type: "submit", class: "button primary"}, "Sign in")),
      h(
        "p",
        {},
        h(
          "button",
          {type: "button", class: "link-button", onclick: () => render("set-password")},
          "Forgot a password? Set a new one with an admin API key"
        )
      )
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const result = await submitting(form, () =>
        api("POST", "/dashboard/api/sign-in", {
          name: form.elements.name.value.trim(),
          password: form.elements.password.value
        })
      );
      if (result.ok) onSignedIn(result.value);
    });
    return [pageHeading("Sign in to Klaxon"), form];
  }

  function setPasswordForm(resetting) {
    const form = h(
      "form",
      {novalidate: true, class: "card"},
      h(
        "p",
        {},
        resetting
          ? "Setting a user's new password signs out their browsers. It needs an admin API key."
          : "Nobody can sign in yet: make the first admin. To prove this is your box, paste the admin API key the gateway wrote to ",
        resetting ? null : h("code", {}, "data/initial-admin-key"),
        resetting ? null : " on first start (installed: /var/lib/klaxon/initial-admin-key), or any other admin key."
      ),
      field({
        label: "Admin API key",
        name: "admin_key",
        type: "password",
        autocomplete: "off",
        spellcheck: "false",
        hint: "Starts with klx_",
        required: true
      }),
      field({
        label: "Name",
        name: "name",
        autocomplete: "username",
        spellcheck: "false",
        hint: resetting ? "The user whose password to set" : "What you will sign in with, e.g. your first name",
        required: true
      }),
      field({
        label: "New password",
        name: "password",
        type: "password",
        autocomplete: "new-password",
        hint: "At least 10 characters; a few words make a good one.",
        required: true
      }),
      field({
        label: "Repeat the password",
        name: "repeat",
        pointer: "/repeat",
        type: "password",
        autocomplete: "new-password",
        required: true
      }),
      h(
        "div",
        {class: "actions"},
        h("button", {type: "submit", class: "button primary"}, "Set password and sign in"),
        resetting
          ? h("button", {type: "button", class: "button", onclick: () => render("sign-in")}, "Back to sign-in")
          : null
      )
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const {admin_key: key, name, password, repeat} = form.elements;
      if (password.value !== repeat.value)
        return showProblem(form, {
          problem: {
            title: "The passwords do not match",
            errors: [{pointer: "/repeat", detail: "type the same password twice"}]
          }
        });
      const result = await submitting(form, async () => {
        const credentials = {name: name.value.trim(), password: password.value};
        await api("POST", "/dashboard/api/password", {admin_key: key.value.trim(), ...credentials});
        return api("POST", "/dashboard/api/sign-in", credentials);
      });
      if (result.ok) onSignedIn(result.value);
    });
    return [pageHeading(resetting ? "Set a new password" : "Make the first admin"), form];
  }

  render(passwordSet ? "sign-in" : "set-password");
}
