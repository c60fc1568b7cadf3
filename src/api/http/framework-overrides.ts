import {constant, inject, OverrideProvider} from "@tsed/di";
import {Ajv} from "ajv";
import {ValidationPipe} from "@tsed/platform-params";
import {PlatformResponseFilter} from "@tsed/platform-response-filter";
import {compile, type JsonParameterStore, type PipeMethods} from "@tsed/schema";

// Ts.ED's per-request steps, replaced where they only repeated work (docs/benchmarks.md, "The
// framework path, profiled for one door"). Their decorators register them in Ts.ED's provider
// registry in place of the stock ones, so importing this module once (server.ts) is enough; the
// parameter pipeline's own two steps are in parameter-pipeline.ts.

/** Ajv's function for a parameter's schema: true when the value is accepted. */
type Validator = (value: unknown) => unknown;

/**
 * Ts.ED's validation pipe with each parameter's schema compiled once, and an accepted value
 * answered at once. The stock pipe asks `compile(parameter)` on every call (which finds its
 * cached schema by a key it builds with `JSON.stringify` of the options each time), then
 * `AjvService.validate` awaits the validator's lookup and the validator itself: two promises per
 * argument per request for a function that is synchronous. A parameter's metadata is fixed once
 * the routes are built, so its schema and Ajv's function for it are kept here. The stock pipe's
 * steps in its order (skip, coerce, the required check, Ajv with the same instance and options);
 * whatever is not plainly accepted (a missing required value, a refused value, an `$async`
 * schema) goes the stock way, so it gets the very same error.
 */
@OverrideProvider(ValidationPipe)
export class PrecompiledValidationPipe implements PipeMethods<unknown, unknown> {
  private readonly stock = new ValidationPipe();
  private readonly validators = new WeakMap<JsonParameterStore, Validator>();
  // The Ajv instance Ts.ED's service compiles with (same keywords and formats); it keeps one
  // compiled function per schema object.
  private readonly compiler = inject(Ajv);
  // Ajv hands back the value it validated as it is only with this setting (server.ts sets it):
  // otherwise the stock path's deep copy is what a route receives, so the stock path is taken.
  private readonly returnsValueAsIs = constant<boolean>("ajv.returnsCoercedValues") === true;

  transform(value: unknown, metadata: JsonParameterStore): unknown {
    if (this.stock.skip(value, metadata)) return value;
    const coerced: unknown = this.stock.coerceTypes(value, metadata);
    if (!metadata.isRequired(coerced)) {
      if (coerced === undefined) return coerced;
      if (this.returnsValueAsIs && this.validatorOf(metadata)(coerced) === true) return coerced;
    }
    return this.stock.transform(value, metadata);
  }

  private validatorOf(metadata: JsonParameterStore): Validator {
    let validate = this.validators.get(metadata);
    if (!validate) {
      validate = this.compiler.compile(compile(metadata, {customKeys: true}) as object);
      this.validators.set(metadata, validate);
    }
    return validate;
  }
}

const PLAIN_DEPTH_LIMIT = 64;

/**
 * Whether a route's answer is JSON data already: strings, numbers, booleans, null, undefined and
 * plain objects and arrays of them. Services answer with such data (no model class, alias, group
 * or serialize hook exists in this gateway); anything else (a Date, a Map, a class instance) is
 * left to json-mapper.
 */
function isPlainJson(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== "object") return typeof value !== "function" && typeof value !== "bigint";
  if (depth > PLAIN_DEPTH_LIMIT) return false;
  if (Array.isArray(value)) return value.every((item) => isPlainJson(item, depth + 1));
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  for (const key in value) if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  return true;
}

/**
 * Ts.ED's response filter without json-mapper for answers that are plain JSON data. json-mapper
 * maps a plain object by its class (Object), which is a recursive copy that drops undefined
 * fields, built with an object spread per field: the same JSON text `JSON.stringify` writes from
 * the data itself, at a cost that grows with the square of the fields. Views, content types and
 * anything not plain go the stock way.
 */
@OverrideProvider(PlatformResponseFilter)
export class PlainResponseFilter extends PlatformResponseFilter {
  protected override serialize(data: unknown, ctx: Parameters<PlatformResponseFilter["transform"]>[1]) {
    return isPlainJson(data) ? Promise.resolve(data) : super.serialize(data, ctx);
  }
}
