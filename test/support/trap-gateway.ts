import {expect} from "vitest";
import {startTestGateway, type TestGateway} from "./gateway.js";
import {startSmtpPeer, type SmtpPeer} from "./smtp-peer.js";
import {freeUdpPort} from "./snmptrap.js";

/** A gateway with its SNMP trap listener on loopback, paging by email to a real SMTP peer, and Maria to page. */
export interface TrapGateway {
  gw: TestGateway;
  smtp: SmtpPeer;
  trapPort: number;
  /** Maria's uuid: email only, one try per step, 10 minutes to acknowledge. */
  maria: string;
  stop(): Promise<void>;
}

export async function startTrapGateway(): Promise<TrapGateway> {
  const smtp = await startSmtpPeer();
  const trapPort = await freeUdpPort();
  const gw = await startTestGateway(
    {
      smtp: {host: "127.0.0.1", port: smtp.port, from: "klaxon@factory.lan"},
      snmp: {trap_port: trapPort, trap_address: "127.0.0.1"}
    },
    {drivers: "production"}
  );
  const recipient = await gw.call("POST", "/api/v1/recipients", {
    body: {name: "Maria", email: "maria@factory.lan", escalation: {ack_timeout_seconds: 600, repeat: 0}}
  });
  expect(recipient.status).toBe(201);
  return {
    gw,
    smtp,
    trapPort,
    maria: recipient.body.uuid,
    stop: async () => {
      await gw.stop();
      await smtp.stop();
    }
  };
}
