/* global process, performance, setTimeout */
// A flood of QoS 1 messages from its own process (so the publisher's work is not the measured
// gateway's), used by the MQTT flood test and by `npm run bench:mqtt`:
//   node test/support/mqtt-flood.child.mjs URL COUNT PER_SECOND TOPIC_PREFIX TOPICS
// publishes COUNT messages paced at PER_SECOND (0: as fast as the broker takes them), message i
// on TOPIC_PREFIX/<i mod TOPICS> with a small JSON payload no mapping acts on. Prints one JSON
// line when the broker has acknowledged all of them: {"sent", "seconds"}.
import mqtt from "mqtt";

const [url, countText, rateText, prefix, topicsText] = process.argv.slice(2);
const count = Number(countText);
const perSecond = Number(rateText);
const topics = Number(topicsText);
const client = await mqtt.connectAsync(url, {protocolVersion: 5, clean: true, reconnectPeriod: 0});
const startedAt = performance.now();
let sent = 0;
let acked = 0;

await new Promise((resolve, reject) => {
  const publishOne = () => {
    const index = sent++;
    const payload = JSON.stringify({sensor: index % topics, value: (index % 997) / 10, seq: index});
    client.publish(`${prefix}/${index % topics}`, payload, {qos: 1}, (error) => {
      if (error) return reject(error);
      if (++acked === count) resolve();
    });
  };
  const tick = () => {
    const due =
      perSecond > 0 ? Math.min(count, Math.floor(((performance.now() - startedAt) / 1000) * perSecond)) : count;
    // Unpaced: a few hundred at a time, so the socket's buffer is not handed all of them at once.
    const until = perSecond > 0 ? due : Math.min(count, acked + 2000);
    while (sent < until) publishOne();
    if (sent < count) setTimeout(tick, perSecond > 0 ? 5 : 1);
  };
  tick();
});
process.stdout.write(JSON.stringify({sent, seconds: (performance.now() - startedAt) / 1000}) + "\n");
await client.endAsync();
