import {OverrideProvider} from "@tsed/di";
import {ParamTypes, ParamValidationError, ParseExpressionPipe, PlatformParams} from "@tsed/platform-params";
import {JsonParameterStore} from "@tsed/schema";

// Ts.ED's parameter pipeline (how each argument of a route or a guard is read and validated),
// without the promises and keys it made per request (docs/benchmarks.md, "The framework path,
// profiled for one door"). Registered in place of the stock ones by their decorators; imported
// once by server.ts.

/** One stage of a parameter's pipeline, as Ts.ED's pipes are: a value in, a value or a promise of one out. */
interface Pipe {
  transform(value: unknown, param: JsonParameterStore): unknown;
}

type Scope = Record<string, unknown>;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as {then?: unknown} | null)?.then === "function";
}

/** The rest of a pipeline once a stage answered with a promise: awaited stage by stage, as the stock walk does throughout. */
async function finishAsync(pending: PromiseLike<unknown>, pipes: Pipe[], from: number, param: JsonParameterStore) {
  try {
    let value = await pending;
    for (let at = from; at < pipes.length; at++) value = await pipes[at].transform(value, param);
    return value;
  } catch (error) {
    throw ParamValidationError.from(param, error);
  }
}

/**
 * Ts.ED's parameter walk with the same pipes, in the same order, and the same errors
 * (`ParamValidationError.from` of whatever a pipe threw), run synchronously while the pipes answer
 * synchronously. The stock walk is `for await` over the pipes with an `await` per stage: an
 * async iterator and two or three promises per pipe per argument per request, for pipes that
 * (but for an `$async` schema) never wait for anything. A stage that does answer with a promise
 * is awaited, and so is every stage after it.
 */
@OverrideProvider(PlatformParams)
export class SynchronousPlatformParams extends PlatformParams {
  override compile(entity: Parameters<PlatformParams["compile"]>[0]) {
    const steps = JsonParameterStore.getParams(entity.target, entity.propertyKey).map((param) => ({
      param,
      pipes: this.getPipes(param) as Pipe[]
    }));
    return (scope: Scope): Promise<unknown[]> => {
      try {
        const args = steps.map(({param, pipes}) => this.argument(scope, pipes, param));
        return args.some(isThenable) ? Promise.all(args) : Promise.resolve(args);
      } catch (error) {
        // Always an Error: `argument` throws only what ParamValidationError.from made.
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    };
  }

  private argument(scope: Scope, pipes: Pipe[], param: JsonParameterStore): unknown {
    let value: unknown = scope;
    for (let at = 0; at < pipes.length; at++) {
      try {
        value = pipes[at].transform(value, param);
      } catch (error) {
        throw ParamValidationError.from(param, error);
      }
      if (isThenable(value)) return finishAsync(value, pipes, at + 1, param);
    }
    return value;
  }
}

/**
 * Ts.ED's expression pipe (which part of the request an argument is: `body`, `headers.prefer`,
 * `$ctx`) with each parameter's path worked out once. The stock pipe rebuilds it on every call
 * (a filter, a join, a lower-casing) and then splits it again to walk it.
 */
@OverrideProvider(ParseExpressionPipe)
export class CachedExpressionPipe extends ParseExpressionPipe {
  private readonly paths = new WeakMap<JsonParameterStore, string[]>();

  override transform(scope: Scope, param: JsonParameterStore): unknown {
    let path = this.paths.get(param);
    if (!path) {
      const key = this.getKey(param);
      path = key ? key.split(".") : [];
      this.paths.set(param, path);
    }
    const value = walk(scope, path);
    const paramType: unknown = param.paramType;
    const type: unknown = param.type;
    if ((paramType === ParamTypes.QUERY || paramType === ParamTypes.PATH) && value === "" && type !== String)
      return undefined;
    return value;
  }
}

/**
 * `getValue` of @tsed/core on a path split once: at each key a field, or what the object's
 * `get(key)` answers; an empty value ends the walk and is the answer (undefined for an empty scope).
 */
function walk(scope: unknown, path: string[]): unknown {
  let value = scope;
  for (let at = 0; at < path.length; at++) {
    const key = path[at];
    if (!value) return at === 0 ? undefined : value;
    const holder = value as Record<string, unknown> & {get?: unknown};
    if (holder[key] !== undefined || (typeof holder === "object" && key in holder)) value = holder[key];
    else if (typeof holder.get === "function") value = (holder.get as (name: string) => unknown)(key);
    else value = undefined;
  }
  return value;
}
