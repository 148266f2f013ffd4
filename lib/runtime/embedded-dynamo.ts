/**
 * dynalite in-process: the DynamoDB stand-in for `npm start` (on disk) and the tests (in memory).
 * The SDK talks to it over loopback HTTP exactly as it talks to DynamoDB.
 */
import type { AddressInfo } from "node:net";
import dynalite from "dynalite";

export interface EmbeddedDynamo {
  endpoint: string;
  close(): Promise<void>;
}

export async function startEmbeddedDynamo(opts: { path?: string } = {}): Promise<EmbeddedDynamo> {
  const server = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(opts.path === undefined ? {} : { path: opts.path }),
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((err) => (err ? reject(err) : resolve())),
      );
    },
  };
}
