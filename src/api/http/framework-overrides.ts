import {inject, OverrideProvider} from "@tsed/di";
import {AjvService} from "@tsed/ajv";
import {ValidationPipe} from "@tsed/platform-params";
import {PlatformResponseFilter} from "@tsed/platform-response-filter";
import {compile, type JsonParameterStore} from "@tsed/schema";

// Two of Ts.ED's per-request steps, replaced where they only repeated work (docs/benchmarks.md,
// "One door: the framework path's waste"). Their decorators register them in Ts.ED's provider
// registry in place of the stock ones, so importing this module once (server.ts) is enough.

/**
 * Ts.ED's validation pipe with each parameter's schema compiled once. The stock pipe asks
 * `compile(parameter)` on every call, and `compile` finds its cached schema by a key it builds
 * with `JSON.stringify` of the options each time. A parameter's metadata is fixed once the routes
 * are built, so its schema object is kept here, and Ajv's service finds its compiled validator by
 * that object's identity. The rest is the stock pipe's, in its order: skip, coerce, the required
 * check, then Ajv with the same options (so the same 400 problem documents).
 */
@OverrideProvider(ValidationPipe)
export class PrecompiledValidationPipe extends ValidationPipe {
  private readonly ajv = inject(AjvService);
  private readonly schemas = new WeakMap<JsonParameterStore, object>();

  override async transform(value: unknown, metadata: JsonParameterStore): Promise<unknown> {
    if (this.skip(value, metadata)) return value;
    const coerced: unknown = this.coerceTypes(value, metadata);
    this.checkIsRequired(coerced, metadata);
    if (coerced === undefined) return coerced;
    return this.ajv.validate(coerced, {
      schema: this.schemaOf(metadata),
      type: metadata.isClass ? (metadata.type as unknown) : undefined,
      collectionType: metadata.collectionType
    });
  }

  private schemaOf(metadata: JsonParameterStore): object {
    let schema = this.schemas.get(metadata);
    if (!schema) {
      schema = compile(metadata, {customKeys: true}) as object;
      this.schemas.set(metadata, schema);
    }
    return schema;
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
