import {api, onSignedOut, setCsrfToken} from "./lib/api.js";
import {fill, focusHeading, h} from "./lib/dom.js";
import {signInPage} from "./pages/sign-in.js";
import {notificationsPage} from "./pages/notifications.js";
import {recipientsPage} from "./pages/recipients.js";
import {schedulesPage} from "./pages/schedules.js";
import {policiesPage} from "./pages/policies.js";
import {maintenancePage} from "./pages/maintenance.js";
import {keysPage} from "./pages/keys.js";
import {webhooksPage} from "./pages/webhooks.js";
import {integrationsPage} from "./pages/integrations.js";
import {statusPage} from "./pages/status.js";
import {auditPage} from "./pages/audit.js";
import {usersPage} from "./pages/users.js";
import {setUser} from "./lib/session.js";
import {watchUndeliverable} from "./lib/undeliverable.js";

// Hash routes: the gateway serves one page, and a reload keeps the place (filters included).
const ROUTES = {
  notifications: {title: "Notifications", render: notificationsPage},
  recipients: {title: "Recipients and groups", render: recipientsPage},
  schedules: {title: "Schedules", render: schedulesPage},
  policies: {title: "Escalation policies", render: policiesPage},
  maintenance: {title: "Maintenance", render: maintenancePage},
  keys: {title: "API keys", render: keysPage},
  webhooks: {title: "Outbound webhooks", render: webhooksPage},
  integrations: {title: "Integrations and heartbeats", render: integrationsPage},
  status: {title: "Gateway status", render: statusPage},
  audit: {title: "Audit log", render: auditPage},
  users: {title: "Users", render: usersPage}
};

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const signOutButton = document.getElementById("sign-out");
const signedInAs = document.getElementById("signed-in-as");
const banner = document.getElementById("undeliverable");
let session = null;
let leavePage = null;
let stopBanner = null;
let signInMessage = null;

function currentRoute() {
  const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  return {name: ROUTES[path] ? path : "notifications", params: new URLSearchParams(query)};
}

// Restarted on every page change, so a new page shows the banner as it is now.
function showChrome(signedIn) {
  nav.hidden = !signedIn;
  signOutButton.hidden = !signedIn;
  setUser(signedIn ? session.user : null);
  signedInAs.hidden = !signedIn;
  signedInAs.textContent = signedIn ? `${session.user.name} (${session.user.role})` : "";
  stopBanner?.();
  stopBanner = signedIn ? watchUndeliverable(banner) : null;
  if (!signedIn) banner.hidden = true;
}

async function route() {
  leavePage?.();
  leavePage = null;
  if (!session?.signed_in) {
    showChrome(false);
    document.title = "Sign in · Klaxon";
    signInPage(main, {passwordSet: session?.password_set ?? true, message: signInMessage, onSignedIn});
    signInMessage = null;
    return;
  }
  showChrome(true);
  const {name, params} = currentRoute();
  for (const link of nav.querySelectorAll("a")) {
    if (link.getAttribute("href") === `#/${name}`) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = `${ROUTES[name].title} · Klaxon`;
  fill(main, h("p", {class: "loading"}, "Loading…"));
  try {
    leavePage = (await ROUTES[name].render(main, {params})) ?? null;
  } catch (error) {
    if (!session?.signed_in) return;
    fill(
      main,
      h(
        "div",
        {class: "form-problem", role: "alert"},
        h("p", {class: "problem-title"}, "This page could not be loaded"),
        h("p", {}, error.message)
      )
    );
  }
  focusHeading();
}

function onSignedIn(signedIn) {
  session = {password_set: true, signed_in: true, ...signedIn};
  setCsrfToken(signedIn.csrf_token);
  if (!location.hash) location.hash = "#/notifications";
  void route();
}

onSignedOut(() => {
  if (!session?.signed_in) return;
  session = {password_set: true, signed_in: false};
  setCsrfToken(null);
  signInMessage = "Your session has ended. Sign in again to continue.";
  void route();
});

signOutButton.addEventListener("click", async () => {
  await api("POST", "/dashboard/api/sign-out").catch(() => undefined);
  session = {password_set: true, signed_in: false};
  setCsrfToken(null);
  signInMessage = "You are signed out.";
  void route();
});

window.addEventListener("hashchange", () => void route());

try {
  session = await api("GET", "/dashboard/api/session");
  setCsrfToken(session.csrf_token);
} catch (error) {
  session = null;
  signInMessage = error.message;
}
void route();
