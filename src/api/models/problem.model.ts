import {Allow, CollectionOf, Description, Property, Required} from "@tsed/schema";

export class FieldErrorModel {
  // "" is the pointer to the whole body (RFC 6901), e.g. when it is missing.
  @Required()
  @Allow("")
  @Description("JSON Pointer into the request body (or /<name> for a query parameter)")
  pointer: string;
  @Required() detail: string;
}

/** RFC 9457 problem details, as every error is answered. */
export class ProblemModel {
  @Required() @Description("Stable URI of the error kind, served by the gateway at /problems/<code>") type: string;
  @Required() title: string;
  @Required() status: number;
  @Required() detail: string;
  @Required() instance: string;
  @Required() @Description("Stable machine-readable error code") code: string;
  @Property() @CollectionOf(FieldErrorModel) errors?: FieldErrorModel[];
  @Property()
  @CollectionOf(String)
  @Description("in_use on a delete: the open notifications that still page this target (the oldest 20)")
  blocking_notifications?: string[];
}
