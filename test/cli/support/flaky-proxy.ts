import {createServer, type IncomingHttpHeaders} from "node:http";
import type {AddressInfo} from "node:net";

/** What the proxy does with one request: answer it itself, cut the connection, or pass it to the gateway. */
export type ProxyAction = {status: number; headers?: Record<string, string>; body?: unknown} | "drop" | "forward";

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback proxy in front of a gateway that follows a script of failures, then forwards. */
export interface FlakyProxy {
  url: string;
  seen: SeenRequest[];
  script(...actions: ProxyAction[]): void;
  close(): Promise<void>;
}

export async function startFlakyProxy(upstream: string): Promise<FlakyProxy> {
  const actions: ProxyAction[] = [];
  const seen: SeenRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    const relay = async (): Promise<void> => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({method: request.method!, path: request.url!, headers: request.headers, body});
      const action = actions.shift() ?? "forward";
      if (action === "drop") return void request.socket.destroy();
      if (action !== "forward") {
        const payload = action.body === undefined ? "" : JSON.stringify(action.body);
        return void response
          .writeHead(action.status, {"Content-Type": "application/problem+json", ...action.headers})
          .end(payload);
      }
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name))
      ) as Record<string, string>;
      const answer = await fetch(upstream + request.url, {method: request.method, headers, body: body || undefined});
      const text = await answer.text();
      response
        .writeHead(
          answer.status,
          Object.fromEntries(
            [...answer.headers].filter(
              ([name]) => !["content-length", "transfer-encoding", "connection", "keep-alive"].includes(name)
            )
          )
        )
        .end(text);
    };
    // Upstream unreachable: the error is printed and the client sees the connection drop, as with "drop".
    request.on(
      "end",
      () =>
        void relay().catch((error: unknown) => {
          console.error("flaky proxy failed:", error);
          request.socket.destroy();
        })
    );
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    script: (...more) => void actions.push(...more),
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      })
  };
}
