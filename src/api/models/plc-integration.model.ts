import {
  AdditionalProperties,
  Any,
  CollectionOf,
  Description,
  Enum,
  Format,
  Integer,
  Max,
  MaxItems,
  MaxLength,
  Min,
  MinLength,
  Nullable,
  Pattern,
  Required
} from "@tsed/schema";
import {PRIORITIES} from "../../domain/vocabulary.js";
import {ALARM_CONDITIONS} from "../../domain/plc/alarm-conditioning.js";
import {MODBUS_TABLES, MODBUS_TYPES, WORD_ORDERS} from "../../domain/plc/modbus-points.js";
import {OPCUA_SECURITY_MODES} from "../../domain/plc/plc-integration.js";

const NAME = /^[A-Za-z0-9_.-]+$/;

/** A point's alarm (docs/integrations.md, "Alarm conditioning"). */
@AdditionalProperties(false)
export class PlcAlarmModel {
  @Required()
  @Enum(...ALARM_CONDITIONS)
  @Description(
    'A comparison with value; "bit": bit `bit` of the word is 1 (or value 0); "change": any change of the value'
  )
  when: string;
  @Nullable(Number) @Description("The limit of a comparison; for bit, the alarm value 1 (default) or 0") value?:
    number | null;
  @Nullable(Number) @Integer() @Min(0) @Max(31) @Description('"bit" only: 0 is the least significant bit') bit?:
    number | null;
  @Min(0)
  @Description(">, >=, <, <= only: an active alarm clears only beyond value ∓ deadband. Default 0")
  deadband?: number;
  @Min(0)
  @Max(86_400)
  @Description("How long the condition must hold before it pages. Default 0")
  on_delay_seconds?: number;
  @Min(0)
  @Max(86_400)
  @Description("How long it must stay clear before the alert resolves. Default 0")
  off_delay_seconds?: number;
  @Nullable(String) @Enum(...PRIORITIES, null) @Description("Default: the integration's default_priority") priority?:
    string | null;
  @Nullable(String)
  @MaxLength(200)
  @Description('{value} and {unit} are filled in. Default "<point> {value} {unit}"')
  title?: string | null;
  @Integer()
  @Min(1)
  @Max(600)
  @Description("More condition changes than this in a minute: chattering, paged once until it calms. Default 10")
  chatter_per_minute?: number;
}

/** A point: Modbus (table, address, type) or OPC UA (node_id). */
@AdditionalProperties(false)
export class PlcPointModel {
  @Required()
  @MinLength(1)
  @MaxLength(64)
  @Pattern(NAME)
  @Description("Letters, digits, _ . -; unique in the integration")
  name: string;
  @Enum(...MODBUS_TABLES) @Description("Modbus only") table?: string;
  @Integer()
  @Description("Modbus only: the protocol address 0-65535 (manuals' 40101 is holding_register 100)")
  address?: number;
  @Enum(...MODBUS_TYPES)
  @Description("Modbus only: bool for coils and discrete inputs, a number type for registers")
  type?: string;
  @Enum(...WORD_ORDERS)
  @Description('Modbus 32-bit types: which register holds the high word. Default "high_first"')
  word_order?: string;
  @MinLength(1)
  @MaxLength(512)
  @Description('OPC UA only: the node, e.g. "ns=2;s=Boiler.Temperature"')
  node_id?: string;
  @Description("value = raw × scale + offset. Default 1") scale?: number;
  @Description("Default 0") offset?: number;
  @MaxLength(16) @Description("Shown with the value, e.g. °C") unit?: string;
  @Nullable(PlcAlarmModel) @Description("None: the point is only shown") alarm?: PlcAlarmModel | null;
}

/** A Modbus device: host (TCP) or serial_port (RTU). */
@AdditionalProperties(false)
export class ModbusSettingsModel {
  @Nullable(String) @MaxLength(253) @Description("Modbus TCP: the device's or gateway's address") host?: string | null;
  @Integer() @Min(1) @Max(65_535) @Description("TCP only. Default 502") port?: number;
  @Nullable(String)
  @MaxLength(512)
  @Description("Modbus RTU: the serial device, best its /dev/serial/by-id/ link")
  serial_port?: string | null;
  @Integer() @Min(300) @Max(1_000_000) @Description("RTU only. Default 9600") baud_rate?: number;
  @Enum("none", "even", "odd") @Description('RTU only. Default "even" (8E1, the Modbus default)') parity?: string;
  @Enum(1, 2) @Description("RTU only. Default 1") stop_bits?: number;
  @Integer() @Min(0) @Max(255) @Description("The unit (slave) id. Default 1") unit_id?: number;
  @Integer() @Min(100) @Max(3_600_000) @Description("Default 1000") poll_interval_ms?: number;
  @Integer()
  @Min(50)
  @Max(60_000)
  @Description("A connect or request taking longer counts as no answer. Default 1000")
  timeout_ms?: number;
}

/** The lowest OPC UA severity (1-1000) of each priority; a severity below every band is info. */
@AdditionalProperties(false)
export class SeverityBandsModel {
  @Integer() @Min(1) @Max(1000) @Description("Default 800") critical?: number;
  @Integer() @Min(1) @Max(1000) @Description("Default 600") high?: number;
  @Integer() @Min(1) @Max(1000) @Description("Default 400") medium?: number;
  @Integer() @Min(1) @Max(1000) @Description("Default 200") low?: number;
}

/** An OPC UA server and the login to it. */
@AdditionalProperties(false)
export class OpcUaSettingsModel {
  @Required()
  @MaxLength(512)
  @Pattern(/^opc\.tcp:\/\//)
  @Description("opc.tcp://host:4840[/path]")
  endpoint_url: string;
  @Required() @Enum(...OPCUA_SECURITY_MODES) security_mode: string;
  @Required()
  @MaxLength(64)
  @Description('"None", "Basic256Sha256", "Aes128_Sha256_RsaOaep" or "Aes256_Sha256_RsaPss"')
  security_policy: string;
  @Nullable(String) @MaxLength(128) @Description("null: anonymous") user?: string | null;
  @Nullable(String) @MaxLength(256) @Description("Write-only: never shown again") password?: string | null;
  @Required() @Description("Subscribe to the server's Alarms & Conditions events") alarms: boolean;
  @Description("How a condition's severity maps to the alert's priority; each band's lowest severity")
  severity_bands?: SeverityBandsModel;
}

/** The PLC fields an integration's body may carry (modbus and opcua kinds only). */
export class PlcInputFieldsModel {
  @Description("modbus only: the device") modbus?: ModbusSettingsModel;
  @Description("opcua only: the server") opcua?: OpcUaSettingsModel;
  @MaxItems(500)
  @CollectionOf(PlcPointModel)
  @Description("modbus and opcua only: the points watched")
  points?: PlcPointModel[];
  @Integer()
  @Min(1)
  @Max(86_400)
  @Description("modbus and opcua only: how long the device may not answer before its target is paged. Default 60")
  unreachable_after_seconds?: number;
}

export class PointStateModel {
  @Required()
  @Any("number", "boolean")
  @Description("A number (scaled), true/false for a bool point; null when the last read failed or gave NaN")
  value: number | boolean | null;
  @Required() @Enum("good", "bad", "uncertain") quality: string;
  @Required() @Enum("normal", "pending", "active", "chattering") alarm: string;
  @Required() @Nullable(String) @Format("date-time") read_at: string | null;
}

export class PlcPointViewModel extends PlcPointModel {
  @Required() @Nullable(PointStateModel) @Description("null while the link starts") state: PointStateModel | null;
}

export class PlcLinkModel {
  @Required() @Enum("connected", "unreachable") state: string;
  @Required() @Description("When the state last changed") since: string;
  @Required() @Nullable(String) @Description("The last failure, in words (kept after a reconnect)") last_error:
    string | null;
}

export class OpcUaSettingsViewModel extends OpcUaSettingsModel {
  @Required() password_set: boolean;
}

/** What GET shows of a PLC integration. */
export class PlcViewFieldsModel {
  @Description("modbus only") modbus?: ModbusSettingsModel;
  @Description("opcua only, without the password") opcua?: OpcUaSettingsViewModel;
  @CollectionOf(PlcPointViewModel)
  @Description("modbus and opcua only, each with its state now")
  points?: PlcPointViewModel[];
  @Integer() @Description("modbus and opcua only") unreachable_after_seconds?: number;
  @Nullable(PlcLinkModel)
  @Description("modbus and opcua only: the device link now; null while it starts")
  link?: PlcLinkModel | null;
}
