import {constant, inject} from "@tsed/di";
import {OpenAPIService} from "@tsed/openapi-utils";

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

/**
 * The gateway's OpenAPI document, errors documented as problem+json. Ts.ED's service caches the
 * document it generates and Swagger UI (/docs) reads that same object, so once this ran both
 * addresses serve the rewritten document.
 */
export async function openApiDocument(): Promise<object> {
  const [documentation] = constant<object[]>("swagger", []);
  return documentProblemMediaType(await inject(OpenAPIService).getOpenAPISpec(documentation as never));
}
