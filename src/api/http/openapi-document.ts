import {constant, inject, OverrideProvider} from "@tsed/di";
import {OpenAPIService, type OpenAPI3Settings, type OpenApiSettings, type Swagger2Settings} from "@tsed/openapi-utils";

const PROBLEM_SCHEMA_REF = "#/components/schemas/ProblemModel";
const PROBLEM_MEDIA_TYPE = "application/problem+json";

interface DocumentedResponse {
  content?: Record<string, {schema?: {$ref?: string}}>;
}

interface OpenApiDocument {
  paths?: Record<string, Record<string, {responses?: Record<string, DocumentedResponse>}>>;
}

/**
 * Ts.ED documents every response as application/json, but every error leaves as
 * application/problem+json (ProblemFilter): the document must name the media type clients
 * receive. Rewrites each ProblemModel response in place; running it twice changes nothing.
 */
export function documentProblemMediaType<T extends object>(document: T): T {
  for (const operations of Object.values((document as OpenApiDocument).paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        const json = response.content?.["application/json"];
        if (json?.schema?.$ref === PROBLEM_SCHEMA_REF) response.content = {[PROBLEM_MEDIA_TYPE]: json};
      }
    }
  }
  return document;
}

type SchemaNode = Record<string, unknown>;

function isNode(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null;
}

/**
 * Ts.ED writes a nullable reference (`@Nullable(QuietHoursModel)`) for OpenAPI 3.0 as
 * `oneOf: [{$ref}, {nullable: true}]`: the second branch has no type, so it matches every value
 * (an object then matches both branches, which oneOf forbids) and linters reject it. OpenAPI 3.0
 * says it as `{type, nullable: true, allOf: [{$ref}]}`, the type taken from the referenced schema.
 * Rewrites every such schema in place; running it twice changes nothing. Validation is untouched:
 * Ajv reads the models' JSON Schema, not this document.
 */
export function documentNullableReferences<T extends object>(document: T): T {
  const schemas = (document as {components?: {schemas?: Record<string, SchemaNode>}}).components?.schemas ?? {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isNode(node)) return;
    const oneOf: unknown[] | null = Array.isArray(node.oneOf) ? node.oneOf : null;
    if (oneOf?.length === 2) {
      const reference = oneOf.find(
        (branch): branch is {$ref: string} => isNode(branch) && typeof branch.$ref === "string"
      );
      const nullBranch = oneOf.find(
        (branch) => isNode(branch) && branch.nullable === true && Object.keys(branch).length === 1
      );
      if (reference && nullBranch) {
        const target = schemas[reference.$ref.replace("#/components/schemas/", "")];
        delete node.oneOf;
        Object.assign(node, {
          type: typeof target?.type === "string" ? target.type : "object",
          nullable: true,
          allOf: [reference]
        });
      }
    }
    Object.values(node).forEach(visit);
  };
  visit(document);
  return document;
}

/** Every document kind Ts.ED's overloads name (OpenAPI 3, Swagger 2): what one override must answer as. */
type AnyOpenApiDocument = OpenAPIService["getOpenAPISpec"] extends {
  (settings: OpenAPI3Settings): Promise<infer OpenApi3>;
  (settings: Swagger2Settings): Promise<infer Swagger2>;
  (settings: OpenApiSettings): Promise<unknown>;
}
  ? OpenApi3 & Swagger2
  : never;

/**
 * Ts.ED's OpenAPI service, building the document when it is first asked for instead of at every
 * start. Under NODE_ENV=production the stock service built it in $onReady (for an `outFile`,
 * which this gateway does not set), and server.ts then rewrote it there: about 4 MB of idle RSS
 * for a document most boxes never serve (docs/benchmarks.md, "Idle footprint"). The document is
 * the same, built once from the same routes, and rewritten (errors as problem+json, nullable
 * references valid) before anyone reads it: /docs, /docs/openapi.json and /api/v1/openapi.json
 * all get it from here.
 */
@OverrideProvider(OpenAPIService)
export class OnDemandOpenAPIService extends OpenAPIService {
  private readonly rewritten = new WeakSet<object>();

  override async getOpenAPISpec(settings: OpenApiSettings): Promise<AnyOpenApiDocument> {
    const document = await super.getOpenAPISpec(settings);
    if (!this.rewritten.has(document)) {
      documentNullableReferences(documentProblemMediaType(document));
      this.rewritten.add(document);
    }
    // One object whichever overload was called; typed as what every overload promises.
    return document as AnyOpenApiDocument;
  }

  override async writeOpenAPISpec(settings: OpenApiSettings): Promise<void> {
    if (settings.outFile) await super.writeOpenAPISpec(settings);
  }
}

/** The gateway's OpenAPI document (Ts.ED's, built once and rewritten by OnDemandOpenAPIService). */
export async function openApiDocument(): Promise<object> {
  const [documentation] = constant<OpenAPI3Settings[]>("swagger", []);
  return inject(OpenAPIService).getOpenAPISpec(documentation);
}
