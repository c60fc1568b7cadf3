import {serveSupervisedWork} from "../../../lib/supervised-worker.js";
import {TimedRegex} from "../../../lib/timed-regex.js";
import {AppError} from "../../shared/errors.js";
import {mqttActions, type MqttMappingEvent, type MqttMappingResult, type MqttMappingWork} from "./mqtt-mapping.js";

// The MQTT mapping's thread (design rule 14): payloads from the LAN are parsed (JSON), looked into
// (pointers) and matched (the rules' regexes) here, never on the thread that pages. Every batch
// gets exactly one event, a result per message in its order; a throw that escapes ends this
// worker and its supervisor starts a fresh one.
const regex = new TimedRegex();

serveSupervisedWork<MqttMappingWork, MqttMappingEvent>((work, emit) => {
  const results = work.items.map((item): MqttMappingResult => {
    try {
      const mapping = mqttActions(work.integrations[item.integrationId], item.topic, item.payload, (pattern, text) =>
        regex.match(pattern, text)
      );
      return {id: item.id, mapping};
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return {id: item.id, invalid: error.message};
    }
  });
  emit({results});
});
