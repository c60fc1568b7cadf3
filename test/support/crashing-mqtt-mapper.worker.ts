import {serveSupervisedWork} from "../../src/lib/supervised-worker.js";
import type {MqttMappingEvent, MqttMappingWork} from "../../src/services/integrations/mqtt/mqtt-mapping.js";

// A stand-in for the MQTT mapping worker that misbehaves on command, as a parser bug would on a
// crafted payload: "throw" throws, "hang" never yields, "memory" grows until the limit ends it.
// "integration" maps to nothing with the integration it was given as the note; any other payload
// maps to nothing with the payload as the note.
serveSupervisedWork<MqttMappingWork, MqttMappingEvent>((work, emit) => {
  const results = work.items.map((item) => {
    if (item.payload === "throw") throw new Error("parser bug");
    if (item.payload === "hang") for (;;);
    if (item.payload === "memory") {
      const hoard: number[][] = [];
      for (;;) hoard.push(new Array(1_000_000).fill(1));
    }
    const integration = work.integrations[item.integrationId];
    const note = item.payload === "integration" ? JSON.stringify(integration) : item.payload;
    return {id: item.id, mapping: {actions: [], note}};
  });
  emit({results});
});
