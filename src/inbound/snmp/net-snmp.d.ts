/**
 * The part of net-snmp (3.x, plain JavaScript) that the trap listener uses, typed from its README
 * ("Application: Notification Receiver", "Authorizer Module") and index.js. @types/net-snmp types
 * createReceiver as `any` and brings a second @types/node, so the listener declares what it relies on.
 */
declare module "net-snmp" {
  import type {SocketType} from "node:dgram";

  export interface ReceivedVarbind {
    oid: string;
    /** An ObjectType code (2 Integer, 4 OctetString, 6 OID, 64 IpAddress, 67 TimeTicks...). */
    type: number;
    value: unknown;
  }

  export interface ReceivedPdu {
    /** 164 Trap (v1), 166 InformRequest, 167 TrapV2. */
    type: number;
    varbinds: ReceivedVarbind[];
    /** v1 traps only. */
    enterprise?: string;
    generic?: number;
    specific?: number;
    /** With includeAuthentication: the v1/v2c community or the v3 user name. */
    community?: string;
    user?: string;
  }

  export interface RemoteInfo {
    address: string;
    family: string;
    port: number;
    size: number;
  }

  export interface Notification {
    pdu: ReceivedPdu;
    rinfo: RemoteInfo;
  }

  /** Errors carry the sender of the packet that caused them, when there was one. */
  export interface ReceiverError extends Error {
    rinfo?: RemoteInfo;
  }

  export interface User {
    name: string;
    level: number;
    authProtocol?: number;
    authKey?: string;
    privProtocol?: number;
    privKey?: string;
  }

  export interface Authorizer {
    addCommunity(community: string): void;
    deleteCommunity(community: string): void;
    getCommunities(): string[];
    addUser(user: User): void;
    deleteUser(name: string): void;
    getUsers(): User[];
  }

  export interface ReceiverOptions {
    port: number;
    address?: string | null;
    transport?: "udp4" | "udp6";
    includeAuthentication?: boolean;
    disableAuthorization?: boolean;
    engineID?: string;
    /** Stands in for node:dgram: the listener hands over the sockets it opens. */
    dgramModule?: {createSocket(type: SocketType): ListenerSocket};
  }

  /**
   * What net-snmp's listener does with a socket it opens (index.js, Listener.startListening and
   * send): listens for its messages and errors, binds it, answers through it, closes it. A
   * node:dgram Socket is one; so is a stand-in that never binds.
   */
  export interface ListenerSocket {
    on(event: "message" | "error", listener: (...args: unknown[]) => void): unknown;
    bind(port: number, address: string | null): unknown;
    send(buffer: Buffer, offset: number, length: number, port: number, address: string): unknown;
    close(): unknown;
  }

  /** The receiver's own SNMP engine: what a discovery report tells an inform's sender. */
  export interface Engine {
    engineID: Buffer;
    engineBoots: number;
    engineTime: number;
  }

  /**
   * A message as net-snmp reads it (index.js "Message class definition"; not exported, reached
   * through the receiver's listener): the trap parser decides on it itself instead of letting the
   * receiver echo informs (see docs/upstream/net-snmp-inform-echo.md).
   */
  export interface Message {
    version: number;
    community?: string;
    user?: User;
    pdu: ReceivedPdu;
    buffer: Buffer | null;
    msgSecurityParameters?: {
      msgAuthoritativeEngineID: Buffer;
      msgAuthoritativeEngineBoots: number;
      msgAuthoritativeEngineTime: number;
      msgUserName: string;
      msgAuthenticationParameters: Buffer | string;
    };
    hasAuthentication(): number | boolean | undefined;
    isReportable(): number | boolean | undefined;
    setReportable(flag: boolean): void;
    toBuffer(): Buffer;
    createReportResponseMessage(engine: Engine, context: string, errorType: string): Message;
  }

  /** processIncoming's answer: the message, a report net-snmp would send instead, or nothing (the callback had the error). */
  export type Incoming = Message | {original: Message; report: true; errorType: string} | undefined;

  export interface Receiver {
    getAuthorizer(): Authorizer;
    close(callback?: () => void): void;
    engine: Engine;
    listener: {
      constructor: {
        processIncoming(buffer: Buffer, authorizer: Authorizer, callback: (error: ReceiverError) => void): Incoming;
      };
    };
  }

  export function createReceiver(
    options: ReceiverOptions,
    callback: (error: ReceiverError | null, notification: Notification | null) => void
  ): Receiver;

  /** The MIB module store (used by the tests to read OIDs out of the MIBs net-snmp ships). */
  export interface ModuleStore {
    loadFromFile(path: string): void;
    translate(name: string, format: string): string;
  }
  export function createModuleStore(): ModuleStore;
  export const OidFormat: {oid: string; path: string; module: string};

  export const PduType: {Trap: number; InformRequest: number; TrapV2: number; GetRequest: number; GetResponse: number};
  export const ObjectType: {OctetString: number; OID: number; IpAddress: number; Counter64: number; Null: number};
  export const SecurityLevel: {authPriv: number};
  export const AuthProtocols: Record<"md5" | "sha" | "sha224" | "sha256" | "sha384" | "sha512", number>;
  export const PrivProtocols: Record<"des" | "aes" | "aes256b" | "aes256r", number>;
}
