/** One value read from a device point; the conditioning turns readings into alarms. */
export interface PointReading {
  readonly point: string; // the point's configured name
  readonly value: number | boolean | null; // null when quality is "bad"
  readonly quality: "good" | "bad" | "uncertain";
  readonly readAt: Date;
}
/** The link's health, in words a plant engineer reads (exception codes and status codes named). */
export interface LinkStatus {
  readonly state: "connected" | "unreachable";
  readonly error?: string;
}
/** A condition of the device's own alarm system (OPC UA Alarms & Conditions). */
export interface DeviceAlarm {
  readonly conditionId: string; // the alert key
  readonly active: boolean; // false -> resolve
  readonly acknowledged: boolean; // true when acknowledged on the device/SCADA side
  readonly acknowledgedBy?: string; // who, as the server names the user of the last acknowledge (OPC UA ClientUserId)
  readonly comment?: string; // the comment of the condition's last acknowledge or comment
  readonly severity: number; // 1-1000, mapped to priority by the integration's bands
  readonly message: string;
  readonly source: string;
  readonly time: Date;
}
export interface PlcLinkListener {
  reading(reading: PointReading): void;
  link(status: LinkStatus): void;
  alarm?(alarm: DeviceAlarm): void;
}
/** One device connection (one per integration). A link never throws into its listener's caller,
 *  reconnects with back-off on its own, and never blocks another link. */
export interface PlcLink {
  start(listener: PlcLinkListener): void;
  readNow(): Promise<readonly PointReading[]>;
  /** Acknowledge a device alarm (OPC UA: the condition's Acknowledge method). */
  acknowledgeAlarm?(conditionId: string, by: string, comment: string): Promise<void>;
  stop(): Promise<void>;
}
