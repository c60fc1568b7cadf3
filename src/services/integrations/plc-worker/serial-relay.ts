import type {Logger} from "../../../lib/logger.js";
import type {SerialOpen, SerialToWorker} from "./plc-worker-protocol.js";

/** The serial port as serialport's binding opens it: bytes in and out, nothing decoded. */
interface OpenPort {
  read(buffer: Buffer, offset: number, length: number): Promise<{bytesRead: number}>;
  write(buffer: Buffer): Promise<void>;
  close(): Promise<void>;
}

const READ_CHUNK = 1_024;

/**
 * The gateway's thread's half of a Modbus RTU link (the worker's half is serial-relay-binding.ts):
 * serialport's native binding polls on the process's main loop and aborts the process when used
 * from a worker, so the port is opened here and its bytes are relayed, undecoded, to the worker
 * that runs modbus-serial. Frames, CRCs and values are read there (design rule 14); here only
 * chunks of bytes move. When the worker ends, its ports are closed so the next one can open them.
 */
export class SerialRelay {
  private readonly ports = new Map<number, Promise<OpenPort | null>>();
  // Port numbers are the worker's: after its end the next worker counts from 1 again, so an open
  // still under way for the ended one must not answer the new one.
  private generation = 0;

  constructor(
    private readonly send: (message: SerialToWorker) => void,
    private readonly logger: Logger
  ) {}

  open(request: SerialOpen): void {
    const {port, ...options} = request;
    const generation = this.generation;
    const current = () => generation === this.generation;
    const opening = import("serialport")
      .then(({SerialPort}) => SerialPort.binding.open({...options, dataBits: 8, lock: true}) as Promise<OpenPort>)
      .then(
        (open) => {
          if (!current()) {
            void open.close().catch(() => undefined);
            return null;
          }
          this.send({op: "serial", port, event: "opened"});
          void this.pump(port, open, current);
          return open;
        },
        (error: Error & {code?: string}) => {
          if (!current()) return null;
          this.ports.delete(port);
          this.send({op: "serial", port, event: "failed", error: error.message, code: error.code ?? null});
          return null;
        }
      );
    this.ports.set(port, opening);
  }

  write(port: number, data: Uint8Array): void {
    const generation = this.generation;
    void this.ports.get(port)?.then((open) =>
      open?.write(Buffer.from(data)).catch((error: Error) => {
        if (generation === this.generation) this.lost(port, error);
      })
    );
  }

  close(port: number): void {
    const opening = this.ports.get(port);
    this.ports.delete(port);
    void opening?.then((open) => open?.close().catch(() => undefined));
  }

  /** The worker ended: its ports are closed (a port opened with a lock refuses a second open). */
  closeAll(): void {
    this.generation++;
    for (const port of [...this.ports.keys()]) this.close(port);
  }

  private async pump(port: number, open: OpenPort, current: () => boolean): Promise<void> {
    const buffer = Buffer.alloc(READ_CHUNK);
    while ((await this.ports.get(port)) === open) {
      try {
        const {bytesRead} = await open.read(buffer, 0, READ_CHUNK);
        if (bytesRead > 0) this.send({op: "serial", port, event: "data", data: buffer.subarray(0, bytesRead).slice()});
      } catch (error) {
        if ((error as {canceled?: boolean}).canceled || !current()) return;
        return this.lost(port, error as Error);
      }
    }
  }

  private lost(port: number, error: Error & {disconnected?: boolean}): void {
    if (!this.ports.has(port)) return;
    this.logger.warn("a Modbus RTU serial port failed", {port, error: error.message});
    this.close(port);
    this.send({op: "serial", port, event: "closed", error: error.message});
  }
}
