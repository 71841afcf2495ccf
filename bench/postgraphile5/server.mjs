// PostGraphile V5 for bench/api.sh: the Amber preset over fleetgraph's own
// tables (schema public), served by grafserv on Node's http server.
//   node server.mjs <database url> <host> <port> <pool size>
// Conditions and orders on columns without an index stay on (as V4's
// default), so that V5 answers the same documents as V4.
import { createServer } from "node:http";
import { postgraphile } from "postgraphile";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";

const [connectionString, host, port, poolSize] = process.argv.slice(2);
if (!connectionString || !host || !port || !poolSize) {
  console.error("usage: node server.mjs <database url> <host> <port> <pool size>");
  process.exit(2);
}

const preset = {
  extends: [PostGraphileAmberPreset],
  disablePlugins: ["PgIndexBehaviorsPlugin"],
  pgServices: [makePgService({ connectionString, schemas: ["public"], poolConfig: { max: Number(poolSize) } })],
  grafserv: { graphqlPath: "/graphql", graphiql: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.on("error", (e) => {
  console.error(e);
  process.exit(1);
});
await serv.addTo(server);
server.listen(Number(port), host, () => console.log(`PostGraphile V5 on http://${host}:${port}/graphql`));
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => server.close(() => pgl.release().then(() => process.exit(0))));
}
