/** A registered endpoint: its method and Express path template (`/api/v1/recipients/:uuid`). */
export interface RouteTemplate {
  method: string;
  path: string;
}

interface CompiledRoute {
  pattern: RegExp;
  method: string;
  parameters: number;
}

/**
 * An Express path template (`/ping/:token/start`) as a pattern whose groups are its parameters,
 * with Express 5's router defaults: case-insensitive, and a trailing slash still matches.
 */
export function templatePattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:\w+/g, "([^/]+)");
  return new RegExp(`^${escaped}/?$`, "i");
}

/**
 * Which methods the gateway serves on a path, so that a request with the wrong method on a known
 * path is told 405 with `Allow` (RFC 9110 section 15.5.6) instead of a misleading 404.
 */
export class RouteMethods {
  private readonly routes: CompiledRoute[];

  constructor(routes: RouteTemplate[]) {
    this.routes = routes.map((route) => ({
      pattern: templatePattern(route.path),
      method: route.method.toUpperCase(),
      parameters: route.path.match(/:\w+/g)?.length ?? 0
    }));
  }

  /**
   * The methods served on this path, as `Allow` lists them (HEAD wherever GET is served); empty for
   * an unknown path. As in OpenAPI, the most concrete templates that match are the resource:
   * `/api/v1/notifications/send` is not also `/api/v1/notifications/{id}`.
   */
  allowedOn(path: string): string[] {
    const matching = this.routes.filter((route) => route.pattern.test(path));
    const fewest = Math.min(...matching.map((route) => route.parameters));
    const methods = new Set(matching.filter((route) => route.parameters === fewest).map((route) => route.method));
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods].sort();
  }
}
