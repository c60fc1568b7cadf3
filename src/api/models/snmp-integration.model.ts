import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  MaxItems,
  MaxLength,
  MinLength,
  Pattern,
  Required
} from "@tsed/schema";
import {SNMP_AUTH_PROTOCOLS, SNMP_PRIV_PROTOCOLS} from "../../domain/snmp-trap.js";
import {PRIORITIES} from "../../domain/vocabulary.js";

const NUMERIC_OID = /^[0-9]+(\.[0-9]+)+$/;
/** A community: printable ASCII without spaces. */
export const COMMUNITY = /^[!-~]+$/;
const TEMPLATE_HELP = "{OID} stands for the value of the first binding at or under that numeric OID";

/** One binding a trap rule needs: at or under `oid`, with the value `equals`. */
@AdditionalProperties(false)
export class TrapConditionModel {
  @Required() @MaxLength(200) @Pattern(NUMERIC_OID) oid: string;
  @Required() @MaxLength(500) equals: string;
}

/** One rule of an snmp_trap integration (docs/integrations.md, "SNMP traps"). */
@AdditionalProperties(false)
export class TrapRuleModel {
  @Required()
  @MaxLength(200)
  @Pattern(NUMERIC_OID)
  @Description("The notification's numeric OID (a v1 trap's: enterprise.0.specific)")
  trap_oid: string;
  @MaxItems(10) @CollectionOf(TrapConditionModel) @Description("Every condition must hold") when?: TrapConditionModel[];
  @Required() @Enum("fire", "resolve") action: string;
  @Required()
  @MinLength(1)
  @MaxLength(150)
  @Description(
    `The alert key, the same for the fire and the resolve of one condition; ${TEMPLATE_HELP}. The agent's address goes in front`
  )
  alert_key: string;
  @MaxLength(200) @Description(`The alert's title; ${TEMPLATE_HELP}. Default: the trap's name`) title?: string;
  @Enum(...PRIORITIES) @Description("Default: the integration's default_priority") priority?: string;
}

/** An SNMPv3 user its devices send as: authPriv, always. */
@AdditionalProperties(false)
export class SnmpV3UserModel {
  @Required() @MinLength(1) @MaxLength(32) @Description("Unique across snmp_trap integrations") name: string;
  @Required() @Enum(...SNMP_AUTH_PROTOCOLS) auth_protocol: string;
  @Required() @MinLength(8) @MaxLength(128) @Description("Pass phrase; never shown again") auth_key: string;
  @Required() @Enum(...SNMP_PRIV_PROTOCOLS) priv_protocol: string;
  @Required() @MinLength(8) @MaxLength(128) @Description("Pass phrase; never shown again") priv_key: string;
}

/** What a v3 user shows: never its keys. */
export class SnmpV3UserViewModel {
  @Required() name: string;
  @Required() @Enum(...SNMP_AUTH_PROTOCOLS) auth_protocol: string;
  @Required() @Enum(...SNMP_PRIV_PROTOCOLS) priv_protocol: string;
}
