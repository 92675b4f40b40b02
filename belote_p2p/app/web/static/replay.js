// The replay page's script (belote_p2p/app/web/replay.py inlines it in the page): draws the
// steps of a game from the page's data and moves between them. Every word comes in the data,
// in the reader's language.
"use strict";

const D = JSON.parse(document.getElementById("replay-data").textContent);
const W = D.words;
const $ = (id) => document.getElementById(id);
let r = 0; // the round shown
let s = 0; // its step

function fmt(text, fields) {
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in fields ? fields[k] : m));
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function card(c, extra) {
  const [text, red] = D.cards[c];
  return el("span", "card" + (red ? " red" : "") + (extra ? " " + extra : ""), text);
}

function labelled(c, label) {
  const k = card(c);
  k.append(el("span", "who", label));
  return k;
}

function drawHands(step) {
  const d = step.decision;
  for (let seat = 0; seat < D.names.length; seat++) {
    const box = $("seat" + seat);
    const hand = box.querySelector(".hand");
    box.classList.toggle("acting", step.seat === seat);
    hand.replaceChildren();
    for (const c of step.hands[seat]) {
      let mark = "";
      if (step.seat === seat && step.action === c) mark = d && d.level > 0 ? "played" : "ok";
      if (step.seat === seat && d && d.best === c) mark = "best";
      hand.append(card(c, mark));
    }
    if (step.down[seat].length && step.hands[seat].length) hand.append(el("span", "rest"));
    for (const c of step.down[seat]) {
      const k = card(c, "down");
      k.title = W.face_down;
      hand.append(k);
    }
  }
}

function drawStrip(round) {
  const strip = $("strip");
  strip.replaceChildren();
  round.steps.forEach((st, i) => {
    if (!st.decision) return;
    const b = el("button", "l" + st.decision.level + (i === s ? " now" : ""));
    b.title = st.decision.place + ": " + st.decision.text;
    b.setAttribute("aria-label", b.title);
    b.addEventListener("click", () => {
      s = i;
      draw();
    });
    strip.append(b);
  });
}

function draw() {
  const round = D.rounds[r];
  const step = round.steps[s];
  const d = step.decision;
  $("where").textContent = round.title + " · " + fmt(W.step, { n: s + 1, of: round.steps.length });
  $("contract").textContent = step.contract;
  $("score").textContent = step.score;
  drawHands(step);
  const trick = $("trick");
  trick.replaceChildren();
  if (step.turned !== null) trick.append(labelled(step.turned, W.turned));
  for (const [seat, c] of step.trick) trick.append(labelled(c, D.names[seat]));
  $("bids").textContent = step.bids.map(([seat, b]) => D.names[seat] + " " + b).join(" · ");
  $("said").textContent = step.said;
  const v = $("verdict");
  v.className = d ? "l" + d.level : "";
  v.textContent = d ? d.place + ": " + d.text + "." : "";
  const last = D.rounds.length - 1;
  $("prev").disabled = r === 0 && s === 0;
  $("next").disabled = r === last && s === round.steps.length - 1;
  $("prevround").disabled = r === 0;
  $("nextround").disabled = r === last;
  drawStrip(round);
}

// A card (or a bid) forward or back, across rounds.
function move(k) {
  s += k;
  if (s < 0) {
    if (r > 0) {
      r--;
      s = D.rounds[r].steps.length - 1;
    } else s = 0;
  } else if (s >= D.rounds[r].steps.length) {
    if (r < D.rounds.length - 1) {
      r++;
      s = 0;
    } else s = D.rounds[r].steps.length - 1;
  }
  draw();
}

// To the first step of the next trick, or of this trick (back: of the trick before, if
// already at this one's first).
function trickMove(k) {
  const steps = D.rounds[r].steps;
  const now = steps[s].tricks;
  let i = s;
  if (k > 0) {
    while (i < steps.length - 1 && steps[i].tricks === now) i++;
  } else {
    while (i > 0 && steps[i - 1].tricks === now) i--;
    if (i === s && i > 0) {
      i--;
      const t = steps[i].tricks;
      while (i > 0 && steps[i - 1].tricks === t) i--;
    }
  }
  s = i;
  draw();
}

function roundMove(k) {
  r = Math.max(0, Math.min(D.rounds.length - 1, r + k));
  s = 0;
  draw();
}

function start() {
  document.title = D.title;
  $("title").textContent = D.title;
  $("views").textContent = [W.views, ...D.methods, D.hints ? W.hints_on : ""].join(" ").trim();
  $("legend").textContent = W.legend;
  $("keys").textContent = W.keys;
  for (const x of D.summaries) $("summaries").append(el("p", "summary", x.text));
  const buttons = [
    ["prevround", W.previous_round, () => roundMove(-1)],
    ["prevtrick", W.previous_trick, () => trickMove(-1)],
    ["prev", W.previous, () => move(-1)],
    ["next", W.next, () => move(1)],
    ["nexttrick", W.next_trick, () => trickMove(1)],
    ["nextround", W.next_round, () => roundMove(1)],
  ];
  for (const [id, word, f] of buttons) {
    const b = $(id);
    b.textContent = word;
    b.addEventListener("click", f);
  }
  D.names.forEach((name, seat) => {
    const box = $("seat" + seat);
    box.classList.add(D.positions[seat]);
    box.querySelector(".name").textContent = name;
  });
  const keys = {
    ArrowRight: () => move(1),
    ArrowLeft: () => move(-1),
    ArrowDown: () => trickMove(1),
    ArrowUp: () => trickMove(-1),
    PageDown: () => roundMove(1),
    PageUp: () => roundMove(-1),
  };
  document.addEventListener("keydown", (e) => {
    const f = keys[e.key];
    if (f) {
      e.preventDefault();
      f();
    }
  });
  draw();
}

start();
