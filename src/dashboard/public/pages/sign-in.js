import {api} from "../lib/api.js";
import {fill, h, pageHeading, focusHeading} from "../lib/dom.js";
import {field, showProblem, submitting} from "../lib/forms.js";

/**
 * Sign-in, and setting the admin password: on first visit (nobody can sign in yet) or to reset a
 * forgotten one. Setting it takes an admin API key, such as the one the gateway wrote to
 * data/initial-admin-key on first start, so nobody else on the network can claim the box.
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
      field({
        label: "Admin password",
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
          "Forgot the password? Set a new one with an admin API key"
        )
      )
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const result = await submitting(form, () =>
        api("POST", "/dashboard/api/sign-in", {password: form.elements.password.value})
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
          ? "Setting a new password signs out every browser. It needs an admin API key."
          : "No admin password is set yet. To prove this is your box, paste the admin API key the gateway wrote to ",
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
        label: "New admin password",
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
      const {admin_key: key, password, repeat} = form.elements;
      if (password.value !== repeat.value)
        return showProblem(form, {
          problem: {
            title: "The passwords do not match",
            errors: [{pointer: "/repeat", detail: "type the same password twice"}]
          }
        });
      const result = await submitting(form, async () => {
        await api("POST", "/dashboard/api/password", {admin_key: key.value.trim(), password: password.value});
        return api("POST", "/dashboard/api/sign-in", {password: password.value});
      });
      if (result.ok) onSignedIn(result.value);
    });
    return [pageHeading(resetting ? "Set a new admin password" : "Set the admin password"), form];
  }

  render(passwordSet ? "sign-in" : "set-password");
}
