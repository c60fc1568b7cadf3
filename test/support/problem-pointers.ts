/** The JSON pointers a problem document's `errors` name (none when it has no `errors`). */
export const pointers = (answer: {body: {errors?: Array<{pointer: string}>}}) =>
  (answer.body.errors ?? []).map((error) => error.pointer);
