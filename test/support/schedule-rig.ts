import {expect} from "vitest";
import {createRecipient, type TestGateway} from "./gateway.js";
import {threeShiftPlant} from "./schedule-fixtures.js";

/** Four crew leads as recipients, crew D a group of two, and the 3-shift plant schedule over them. */
export async function createPlant(gw: TestGateway, startsOn = "2026-03-27") {
  const anna = await createRecipient(gw, {name: "Anna", email: "anna@plant.lan", phone: null});
  const bert = await createRecipient(gw, {name: "Bert", email: "bert@plant.lan", phone: null});
  const cem = await createRecipient(gw, {name: "Cem", email: "cem@plant.lan", phone: null});
  const dora = await createRecipient(gw, {name: "Dora", email: "dora@plant.lan", phone: null});
  const group = await gw.call("POST", "/api/v1/groups", {body: {name: "Crew D", members: [dora, anna]}});
  expect(group.status).toBe(201);
  const body = {
    name: "Line 3",
    timezone: "Europe/Berlin",
    layers: [threeShiftPlant(startsOn, {A: anna, B: bert, C: cem, D: group.body.uuid})],
    fallback: bert
  };
  const answer = await gw.call("POST", "/api/v1/schedules", {body});
  expect(answer.status).toBe(201);
  return {anna, bert, cem, dora, crewD: group.body.uuid as string, schedule: answer.body, body};
}
