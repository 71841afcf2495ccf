// Receives fleetgraph webhook deliveries on 127.0.0.1:$PORT and verifies
// each one's Standard Webhooks signature with the reference library
// (npm standardwebhooks), as a receiver would. It answers 200 to a verified
// delivery and 401 to any other, checks that a tampered body is refused,
// and after $EXPECT deliveries prints one JSON line
// {"verified": n, "types": [...], "ids": [...]} and exits (1 on any
// failure).
import http from "node:http";
import { Webhook } from "standardwebhooks";

const port = Number(process.env.PORT);
const expect = Number(process.env.EXPECT);
const wh = new Webhook(process.env.SECRET);
const verified = [];
const failures = [];

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = {
      "webhook-id": req.headers["webhook-id"],
      "webhook-timestamp": req.headers["webhook-timestamp"],
      "webhook-signature": req.headers["webhook-signature"],
    };
    try {
      const payload = wh.verify(body, headers);
      let tamperedRefused = false;
      try {
        wh.verify(body.replace(/}$/, ', "x": 1}'), headers);
      } catch {
        tamperedRefused = true;
      }
      if (!tamperedRefused) throw new Error("a tampered body verified");
      verified.push({ type: payload.type, id: headers["webhook-id"] });
      res.writeHead(200).end("ok");
    } catch (err) {
      failures.push(`${headers["webhook-id"]}: ${err.message}`);
      res.writeHead(401).end(err.message);
    }
    if (verified.length + failures.length >= expect) {
      console.log(JSON.stringify({ verified: verified.length, types: verified.map((v) => v.type),
        ids: verified.map((v) => v.id), failures }));
      server.close();
      process.exit(failures.length === 0 ? 0 : 1);
    }
  });
});
server.listen(port, "127.0.0.1");
