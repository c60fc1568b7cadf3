import type {PlcWorkerEvent, SerialToWorker} from "./plc-worker-protocol.js";

// The worker's half of a Modbus RTU link (the gateway's thread's half is serial-relay.ts): a
// serialport binding (the interface of @serialport/bindings-interface) whose port is opened by
// the gateway's thread; its bytes arrive here as messages and modbus-serial decodes them here.

interface OpenOptions {
  path: string;
  baudRate: number;
  parity?: "none" | "even" | "odd";
  stopBits?: 1 | 2;
}

type Say = (event: PlcWorkerEvent) => void;

class RelayedPort {
  isOpen = true;
  private readonly chunks: Buffer[] = [];
  private waiting: {resolve: () => void; reject: (error: Error) => void} | null = null;
  private ended: Error | null = null;

  constructor(
    readonly openOptions: OpenOptions,
    private readonly id: number,
    private readonly say: Say,
    private readonly forget: (id: number) => void
  ) {}

  received(message: SerialToWorker): void {
    if (message.event === "data" && message.data) this.chunks.push(Buffer.from(message.data));
    else if (message.event === "closed")
      this.end(Object.assign(new Error(message.error ?? "the port closed"), {disconnected: true}));
    const waiting = this.waiting;
    this.waiting = null;
    if (this.ended) waiting?.reject(this.ended);
    else waiting?.resolve();
  }

  async read(buffer: Buffer, offset: number, length: number): Promise<{bytesRead: number; buffer: Buffer}> {
    while (!this.chunks.length) {
      if (this.ended) throw this.ended;
      await new Promise<void>((resolve, reject) => (this.waiting = {resolve, reject}));
    }
    const chunk = this.chunks[0];
    const bytesRead = chunk.copy(buffer, offset, 0, Math.min(length, chunk.length));
    if (bytesRead < chunk.length) this.chunks[0] = chunk.subarray(bytesRead);
    else this.chunks.shift();
    return {bytesRead, buffer};
  }

  write(buffer: Buffer): Promise<void> {
    if (this.ended) return Promise.reject(this.ended);
    this.say({type: "serial", op: "write", port: this.id, data: Uint8Array.from(buffer)});
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (!this.ended) this.say({type: "serial", op: "close", port: this.id});
    this.end(Object.assign(new Error("the port was closed"), {canceled: true}));
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(this.ended!);
    return Promise.resolve();
  }

  update = (): Promise<void> => Promise.resolve();
  set = (): Promise<void> => Promise.resolve();
  get = () => Promise.resolve({cts: false, dsr: false, dcd: false});
  getBaudRate = () => Promise.resolve({baudRate: this.openOptions.baudRate});
  flush = (): Promise<void> => Promise.resolve();
  drain = (): Promise<void> => Promise.resolve();

  private end(error: Error): void {
    this.isOpen = false;
    this.ended ??= error;
    this.forget(this.id);
  }
}

/** The binding modbus-serial's RTU port is given in the worker, and where the relayed bytes come in. */
export class SerialRelayBinding {
  private nextId = 0;
  private readonly ports = new Map<number, RelayedPort>();
  private readonly opening = new Map<number, {resolve: (port: RelayedPort) => void; reject: (error: Error) => void}>();

  constructor(private readonly say: Say) {}

  list = () => Promise.resolve([]);

  open = (options: OpenOptions): Promise<RelayedPort> =>
    new Promise((resolve, reject) => {
      const id = ++this.nextId;
      this.opening.set(id, {
        resolve: () => {
          const port = new RelayedPort(options, id, this.say, (gone) => this.ports.delete(gone));
          this.ports.set(id, port);
          resolve(port);
        },
        reject
      });
      this.say({
        type: "serial",
        op: "open",
        port: id,
        path: options.path,
        baudRate: options.baudRate,
        parity: options.parity ?? "none",
        stopBits: options.stopBits ?? 1
      });
    });

  /** A message from the gateway's thread about port `message.port`. */
  received(message: SerialToWorker): void {
    const opening = this.opening.get(message.port);
    if (opening) {
      this.opening.delete(message.port);
      if (message.event === "opened") opening.resolve(undefined as never);
      else
        opening.reject(
          Object.assign(new Error(message.error ?? "the port could not be opened"), {code: message.code ?? undefined})
        );
      return;
    }
    this.ports.get(message.port)?.received(message);
  }
}
