import {api} from "./api.js";
import {announce, confirmAction, h} from "./dom.js";

/**
 * A button for one API call that changes something for good (delete, end now): it asks
 * `question` first, shows a refusal (409 in use, say) beside itself, and on success announces
 * `done` and runs `after` (usually a reload). Offered only to roles that may (`needs`, lib/session.js).
 */
export function confirmedAction({
  text,
  label,
  question,
  method,
  path,
  done,
  after,
  className = "button small danger",
  needs = "admin"
}) {
  return h(
    "button",
    {
      type: "button",
      class: className,
      "aria-label": label,
      "data-needs": needs,
      onclick: async (event) => {
        if (!confirmAction(question)) return;
        event.target.parentElement.querySelector(".card-problem")?.remove();
        try {
          await api(method, path);
        } catch (error) {
          event.target.after(h("p", {class: "card-problem", role: "alert"}, error.message));
          return;
        }
        announce(done);
        await after();
      }
    },
    text
  );
}
