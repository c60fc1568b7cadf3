import {Security} from "@tsed/schema";

/**
 * Documents an operation that needs no API key as `security: []`, so clients and linters read
 * "public" rather than "forgot to say". Documentation only: what a route accepts is decided by
 * whether it uses `Authorize`.
 */
export function Public(): ClassDecorator & MethodDecorator {
  return Security([]);
}
