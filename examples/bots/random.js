#!/usr/bin/env node
// A belote-p2p bot program in JavaScript (node, no packages): protocol/BOTS.md.
//
//     belote-p2p arena --bots 'exec:cmd=node examples/bots/random.js,rules'
//
// It plays a random legal action, drawn from the seed the table sends with each decision:
// the same match gives the same game, whatever the machine.
"use strict";

const readline = require("readline");

// mulberry32: a small seeded generator, enough to pick among a few actions.
function generator(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "hello") {
    send({ type: "hello", protocol: 1, name: "random-js", version: "1.0", options: {} });
  } else if (message.type === "decide") {
    const legal = message.observation.legal;
    const pick = Math.floor(generator(message.seed)() * legal.length);
    send({ type: "action", id: message.id, action: legal[pick] });
  } else if (message.type === "quit") {
    process.exit(0);
  }
  // new_game and new_round need no answer.
});
lines.on("close", () => process.exit(0));
