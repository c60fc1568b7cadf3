// Who is signed in, for pages that show only what their role may do. The gateway decides (a
// refused request is a 403 that says why); this only keeps the page from offering it.

let user = null;

/** Remembers the signed-in user ({id, name, role}) and marks the page with the role for the stylesheet. */
export function setUser(signedIn) {
  user = signedIn ?? null;
  if (user) document.body.dataset.role = user.role;
  else delete document.body.dataset.role;
}

export function currentUser() {
  return user;
}

/**
 * Whether the signed-in user may do what an element marked `data-needs` needs: "admin" (admins
 * only) or "operate" (operators and admins). The stylesheet hides marked elements the same way.
 */
export function can(needs) {
  if (!user) return false;
  return user.role === "admin" || (needs === "operate" && user.role === "operator");
}
