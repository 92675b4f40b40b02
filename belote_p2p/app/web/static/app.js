// The table page: a view of one seat, drawn from the JSON state the server sends over a
// WebSocket after every change, and the seat's input (clicks, keys) sent back as action
// codes. Every rule is checked in Python; this page only shows and asks.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k.startsWith("data")) e.setAttribute(k.replace(/[A-Z]/g, (m) => "-" + m.toLowerCase()), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

// Children, leaving out the absent ones (null, undefined, false).
function fill(parent, ...children) {
  parent.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
}

function cardImg(card, extra = {}) {
  return el("img", { src: `cards/${card.code}.svg`, alt: card.label, title: card.text, ...extra });
}

// -- the connection ---------------------------------------------------------------------

let socket = null;
let state = null;
let retry = 500;

function connect() {
  socket = new WebSocket(`ws://${location.host}${location.pathname.replace(/[^/]*$/, "")}ws`);
  socket.addEventListener("open", () => {
    retry = 500;
    document.body.dataset.connected = "true";
    $("#banner").textContent = "";
  });
  socket.addEventListener("message", (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "state") {
      state = msg;
      render();
    } else if (msg.type === "error") {
      toast(msg.text);
    }
  });
  socket.addEventListener("close", () => {
    document.body.dataset.connected = "false";
    if (state && state.closing) {
      $("#banner").textContent = "The table page is closed: you may close this tab.";
      return;
    }
    $("#banner").textContent = "This page lost its belote-p2p process: reconnecting… If the command stopped, "
      + `resume the game (belote-p2p resume --web --web-port ${location.port}): this tab reconnects by itself.`;
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 5000);
  });
}

function send(msg) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(msg));
  else toast("Not connected to the game.");
}

let toastTimer = null;
function toast(text) {
  const t = $("#toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, 4000);
}

// -- drawing ----------------------------------------------------------------------------

function render() {
  document.body.dataset.version = String(state.version);
  const table = state.table;
  $("#table").hidden = !table;
  $("#lobby").hidden = !!table || !state.lobby;
  if (table) renderTable(table);
  else if (state.lobby) renderLobby(state.lobby);
}

let deadlineAt = null;
let pickedValue = null;

function renderTable(t) {
  const root = $("#table");
  root.dataset.phase = t.phase;
  root.dataset.yourTurn = String(t.your_turn);
  root.dataset.decision = t.decision === null ? "" : String(t.decision);
  root.dataset.round = t.round === null ? "" : String(t.round);
  root.dataset.finished = String(t.finished);
  root.dataset.seats = String(t.seat_count);
  root.dataset.watching = String(!!t.watching);
  document.title = t.your_turn ? "▶ Your turn · Belote p2p" : "Belote p2p";
  $("#title").textContent = t.title;

  const sc = t.scores;
  fill($("#scores"),
    ...sc.sides.map((x) => el("span", { class: `side ${x.ours ? "us" : "them"}`, text: `${x.name} ${x.score}` })),
    el("span", { class: "dim", text: `to ${sc.target}` }),
    sc.pending ? el("span", { class: "badge", text: `pot ${sc.pending}` }) : null,
  );
  $("#contract").textContent = t.contract.text;
  $("#resign").hidden = t.finished || !!t.ended || t.watching;
  $("#stop-watching").hidden = !t.watching || t.finished;  // a watcher leaves at any moment

  const placed = new Set(t.seats.map((s) => s.position));
  for (const box of $$("#felt .seat")) {
    if (placed.has(box.dataset.pos)) continue;
    box.hidden = true;
    fill(box);
  }
  for (const s of t.seats) renderSeat(t, s);
  renderTrick(t);
  renderTurned(t);
  renderBidding(t);
  renderHand(t);

  if (t.turn.deadline_in !== null && t.turn.deadline_in !== undefined) {
    deadlineAt = performance.now() + t.turn.deadline_in * 1000;
  } else {
    deadlineAt = null;
  }
  tick();

  renderLastTrick(t);
  $("#bids-panel").hidden = !t.has_bidding;
  $("#bids").textContent = t.bids.length ? t.bids.map((b) => `${b.name}: ${b.text}`).join(" · ") : "none yet";
  fill($("#news"), ...t.log.slice(-8).map((n) => el("li", { text: n })));
  renderChat(t);
  renderSummary(t);
}

function renderSeat(t, s) {
  const box = $(`.seat[data-pos="${s.position}"]`);
  box.hidden = false;
  box.className = `seat ${s.ours ? "us" : "them"}${s.to_act ? " to-act" : ""}`;
  box.dataset.seat = String(s.seat);
  const badges = el("div", { class: "badges" },
    s.dealer ? el("span", { class: "badge dealer", text: "dealer" }) : null,
    s.taker ? el("span", { class: "badge taker", text: "taker" }) : null,
    s.partner ? el("span", { class: "badge", text: "partner" }) : null,
    s.connected ? null : el("span", { class: "badge off", text: "disconnected" }),
  );
  const said = [...s.announced, ...s.belote.map((c) => `belote ${c}`)];
  const bid = t.phase !== "play" ? [...t.bids].reverse().find((b) => b.seat === s.seat) : null;
  fill(box, 
    el("div", { class: "name", text: s.you ? `You (${s.name})` : s.name }),
    s.you ? null : el("div", { class: "fp", title: "key fingerprint", text: s.fingerprint }),
    s.open_hand ? el("div", { class: "open-hand", role: "group", "aria-label": `${s.name}'s open hand` },
      ...s.open_hand.map((c) => cardImg(c, { alt: c.label }))) : null,
    s.dummy && t.dummy_line ? el("div", { class: "said left", text: t.dummy_line }) : null,
    s.you || !s.cards || s.piles || s.open_hand ? null : el("div", { class: "backs", "aria-label": `${s.cards} cards` },
      ...Array.from({ length: s.cards }, () => el("img", { src: "cards/back.svg", alt: "" }))),
    s.you || !s.piles ? null : el("div", { class: "piles", role: "group", "aria-label": `${s.name}'s piles` },
      ...s.piles.map((p) => pile(p, p.card ? cardImg(p.card) : null))),
    badges,
    bid ? el("div", { class: "said", text: bid.text }) : null,
    said.length ? el("div", { class: "said", text: said.join(", ") }) : null,
  );
}

// Two-handed: one pile, the card on top (``top``: an image or a button, none when the pile
// has no card to play) and a card back peeking under it for a face-down card.
function pile(p, top) {
  const label = `pile ${p.number}: ` + (p.card ? p.card.label : "no card") + (p.hidden ? ", a face-down card under it" : "");
  return el("div", { class: "pile" + (top ? "" : " bare"), dataPile: String(p.number), dataHidden: String(p.hidden), "aria-label": label },
    p.hidden ? el("img", { class: "under", src: "cards/back.svg", alt: "" }) : null,
    top);
}

// The completed trick stays on show (its cards and who won it) until the next trick's first
// card, and ``hold_in`` seconds more once that trick has begun (the model's rule, the page's
// hold); a click, a tap or a key puts it away sooner (dismissTrick).
let heldUntil = null;
let heldKey = null;
let dismissedKey = null;
let heldTimer = null;

function shownTrick(t) {
  const st = t.shown_trick;
  if (!st) { heldKey = null; heldUntil = null; return null; }
  const key = `${t.table_id}/${t.round}/${st.number}`;
  if (key === dismissedKey) return null;
  if (st.hold_in === null) { heldKey = key; heldUntil = null; return st; }
  if (heldKey !== key || heldUntil === null) { heldKey = key; heldUntil = performance.now() + st.hold_in * 1000; }
  if (performance.now() >= heldUntil) return null;
  clearTimeout(heldTimer);
  heldTimer = setTimeout(() => { if (state && state.table) renderTable(state.table); }, heldUntil - performance.now() + 20);
  return st;
}

function dismissTrick() {
  if (!state || !state.table || !heldKey || !$("#trick").dataset.won) return;
  dismissedKey = heldKey;
  renderTable(state.table);
}

function renderTrick(t) {
  const bySeat = {};
  const held = t.phase === "play" ? shownTrick(t) : null;
  const trick = held || t.trick;
  $("#trick").dataset.current = String(t.trick ? t.trick.cards.length : 0);
  $("#trick").dataset.won = held ? (held.hold_in === null ? "until-next" : "timed") : "";
  $("#trick-won").textContent = held ? held.text : "";
  $("#trick-won").hidden = !held;
  if (trick) for (const c of trick.cards) bySeat[c.seat] = c;
  const placed = new Set(t.seats.map((s) => s.position));
  for (const slot of $$("#trick .slot")) {
    slot.hidden = !placed.has(slot.dataset.pos);
    if (slot.hidden) { slot.dataset.card = ""; fill(slot); }
  }
  for (const s of t.seats) {
    const slot = $(`.slot[data-pos="${s.position}"]`);
    const c = bySeat[s.seat];
    slot.className = "slot" + (trick && trick.master === s.seat && c ? " master" : "");
    slot.dataset.card = c ? c.code : "";
    if (!c) { fill(slot, ); continue; }
    const tags = [];
    if (trick.leader === s.seat) tags.push("led");
    if (trick.master === s.seat) tags.push(held ? "★ won" : "★ master");
    fill(slot, cardImg(c), tags.length ? el("span", { class: "tag", text: tags.join(" · ") }) : null);
  }
  $("#trick").hidden = t.phase !== "play";
}

function renderTurned(t) {
  const box = $("#turned");
  const show = t.turned && (t.phase === "take-first" || t.phase === "take-second");
  box.hidden = !show;
  if (show) fill(box, cardImg(t.turned), el("span", { class: "dim", text: "turned card" }));
}

const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };

function suitButton(letter, code, label) {
  const img = "SHDC".includes(letter) ? el("img", { src: `cards/suit-${letter}.svg`, alt: "" }) : null;
  return el("button", { type: "button", class: "suit", dataCode: code, "aria-label": label, onclick: () => act(code) },
    img, ` ${SUIT_NAMES[letter] || letter}`);
}

function renderBidding(t) {
  const box = $("#bidding");
  const b = t.bidding;
  if (!b) { fill(box, ); pickedValue = null; return; }
  const rows = [];
  const simple = [];
  if (b.take) simple.push(el("button", { type: "button", class: "primary", dataCode: "take", onclick: () => act("take") },
    `Take the ${b.turned ? b.turned.text : "turned card"}`));
  for (const s of b.choose) simple.push(suitButton(s, `choose ${s}`, `choose ${SUIT_NAMES[s] || s} as trump`));
  if (simple.length) rows.push(el("div", { class: "row" }, ...simple));
  const values = [...b.values.map(String), ...(b.capot ? ["capot"] : []), ...(b.generale ? ["generale"] : [])];
  if (values.length) {
    if (pickedValue && !values.includes(pickedValue)) pickedValue = null;
    rows.push(el("div", { class: "row", role: "group", "aria-label": "contract" },
      ...values.map((v) => el("button", { type: "button", dataValue: v, "aria-pressed": String(v === pickedValue),
        onclick: () => { pickedValue = v; renderBidding(t); } }, v === "generale" ? "générale" : v))));
    rows.push(el("div", { class: "row", role: "group", "aria-label": "trump" },
      ...b.suits.map((s) => {
        const btn = suitButton(s, pickedValue ? `${pickedValue} ${s}` : "", `bid ${pickedValue || ""} ${SUIT_NAMES[s] || s}`);
        btn.disabled = !pickedValue;
        return btn;
      })));
  }
  const last = [];
  if (b.coinche) last.push(el("button", { type: "button", dataCode: "coinche", onclick: () => act("coinche") }, "Coinche"));
  if (b.surcoinche) last.push(el("button", { type: "button", dataCode: "surcoinche", onclick: () => act("surcoinche") }, "Surcoinche"));
  if (b.pass) last.push(el("button", { type: "button", dataCode: "pass", onclick: () => act("pass") }, "Pass"));
  rows.push(el("div", { class: "row" }, ...last));
  const focused = document.activeElement && document.activeElement.closest("#bidding") ? document.activeElement.dataset.code || document.activeElement.dataset.value : null;
  fill(box, ...rows);
  if (focused) {
    const again = $$("#bidding button").find((x) => x.dataset.code === focused || x.dataset.value === focused);
    if (again) again.focus();
  }
}

function act(code) {
  if (!state || !state.table || state.table.decision === null) return;
  send({ type: "act", code, decision: state.table.decision });
}

let handDrawn = null;  // what the hand shows now (renderHand)

function renderHand(t) {
  const box = $("#hand");
  const focused = document.activeElement && document.activeElement.classList.contains("card") ? document.activeElement.dataset.code : null;
  const playing = t.hand.some((c) => c.playable);
  box.classList.toggle("playing", playing);
  const button = (c) => {
    const label = (c.number === null ? "" : `${c.number}: `) + c.label + (playing ? (c.legal ? ", playable" : ", cannot be played now") : "");
    return el("button", {
      type: "button", class: "card" + (c.legal ? " legal" : ""), dataCode: c.code, dataNumber: c.number === null ? null : String(c.number),
      "aria-label": label, "aria-disabled": playing && !c.legal ? "true" : null,
      onclick: () => { if (c.legal) act(c.code); else if (playing) toast(`${c.text} cannot be played now.`); },
    }, cardImg(c, { alt: "" }), c.number === null ? null : el("span", { class: "num", text: String(c.number) }));
  };
  const me = t.seats.find((s) => s.you) || t.seats[t.seat];  // a watcher: the seat it sits by
  box.classList.toggle("piles", !!me.piles);
  // Drawn again only when it changed: a message about something else (a chat line, another
  // seat's connection) must not replace the card under a press, which would lose the click.
  const drawn = JSON.stringify([playing, t.hand, me.piles || null]);
  if (handDrawn === drawn) return;
  handDrawn = drawn;
  const items = [];
  if (me.piles) {
    // Two-handed: our eight piles, the cards on top ours to play, by their pile's number.
    const byPile = Object.fromEntries(t.hand.map((c) => [c.number, c]));
    for (const p of me.piles) {
      const c = byPile[p.number];
      items.push(pile(p, c ? button(c) : (p.card ? cardImg(p.card) : null)));
    }
  } else {
    let suit = null;
    for (const c of t.hand) {
      if (suit !== null && c.suit !== suit) items.push(el("span", { class: "gap", "aria-hidden": "true" }));
      suit = c.suit;
      items.push(button(c));
    }
  }
  fill(box, ...items);
  if (focused) {
    const again = $(`#hand button.card[data-code="${focused}"]`);
    if (again) again.focus();
  }
}

function renderLastTrick(t) {
  const box = $("#last-trick");
  const lt = t.last_trick;
  if (!lt) { box.textContent = "none yet"; return; }
  const names = Object.fromEntries(t.seats.map((s) => [s.seat, s.you ? "You" : s.name]));
  fill(box, 
    ...lt.cards.map((c) => el("figure", { class: c.seat === lt.master ? "won" : "" }, cardImg(c, { alt: c.label }),
      el("figcaption", { text: names[c.seat] }))),
    el("span", { class: "dim", text: `→ ${names[lt.master]} (${lt.points})` }),
  );
  box.setAttribute("aria-label", t.last_trick_text);
}

function renderChat(t) {
  fill($("#chat"), ...t.chat.map((c) => el("li", {}, el("b", { text: `${c.name}: ` }), c.text)));
  const input = $("#chat-input");
  input.disabled = !t.chat_enabled;
  input.placeholder = t.chat_enabled ? "Say something" : "Chat is not available at this table yet";
  $("#chat-form button").disabled = !t.chat_enabled;
}

// The summary of a round stays on screen until the person closes it or has to act; the
// side panel keeps it through the next round.
function dismissed() { return sessionStorage.getItem("dismissed-round"); }

function renderSummary(t) {
  const over = !!t.ended || t.finished;
  const rp = t.round_points;
  const key = rp ? `${t.table_id}/${rp.round}` : null;
  if (rp && t.your_turn && !over) sessionStorage.setItem("dismissed-round", key);
  const show = over || (rp !== null && key !== dismissed());
  fill($("#last-round"), ...t.last_summary.map((s) => el("li", { text: s })));
  $("#last-round-panel").hidden = !t.last_summary.length;
  const box = $("#summary");
  box.hidden = !show;
  if (!show) return;
  const factor = rp && rp.multiplier > 1 ? ` (${rp.multiplier === 2 ? "coinched" : "surcoinched"} ×${rp.multiplier})` : "";
  $("#summary-title").textContent = rp ? `Round ${rp.round}: ${rp.outcome_text}${factor}` : (over ? "Game over" : "Round over");
  const rows = [];
  if (rp) {
    // A column per side (a team with four seats, a player with two or three), ours first.
    const sides = rp.sides;
    const takers = (x) => (x.takers ? (t.teams ? " (takers)" : " (taker)") : "");
    rows.push(el("tr", {}, el("th", { text: "" }),
      ...sides.map((x) => el("th", { class: x.ours ? "us" : "them", text: x.name + takers(x) }))));
    const line = (label, field) => el("tr", {}, el("td", { text: label }), ...sides.map((x) => el("td", { text: String(x[field]) })));
    rows.push(el("tr", {}, el("td", { colspan: String(sides.length + 1), text: rp.verdict + (rp.sweep ? ` (${rp.sweep})` : "") })));
    rows.push(line("Tricks", "tricks"));
    rows.push(line("Card points", "card_points"));
    rows.push(line("with dix de der", "dix_de_der"));
    if (sides.some((x) => x.announcements)) rows.push(line("Announcements", "announcements"));
    if (sides.some((x) => x.belote)) rows.push(line("Belote", "belote"));
    rows.push(line("Round score", "score"));
    rows.push(line("Game", "game"));
  }
  fill($("#summary-points"), ...rows);
  fill($("#summary-lines"), ...t.last_summary.map((s) => el("li", { text: s })));
  $("#final").hidden = !t.ended;
  $("#final").textContent = t.ended || "";
  $("#score-sheet").hidden = !(over && t.sheet);
  $("#score-sheet").textContent = t.sheet || "";
  $("#result-line").textContent = t.result || "";
  $("#summary-close").hidden = over;
  $("#rematch").hidden = !t.rematch_enabled;
  $("#leave").hidden = !t.finished;
}

// A narrow or touch screen taps its cards, and has no arrow keys to speak of.
function touchScreen() {
  return window.matchMedia("(pointer: coarse), (max-width: 760px)").matches;
}

// The turn line with its countdown, ticking from the model's deadline (red under
// ``warn_under`` seconds on our turn), and the header's clock.
function tick() {
  const box = $("#countdown");
  const line = $("#turn-line");
  const t = state && state.table;
  if (!t) return;
  const turn = t.turn;
  let tail = turn.tail || "";
  if (touchScreen()) tail = tail.replace("click a card or type its number", "tap a card");
  let left = null;
  if (deadlineAt !== null && turn.seat !== null && turn.seconds_left !== null) {
    left = Math.max(0, Math.round((deadlineAt - performance.now()) / 1000));
  }
  const text = turn.head + (left === null ? "" : ` (${left} s left)`) + tail;
  if (line.textContent !== text) line.textContent = text;
  const warn = left !== null && t.your_turn && left <= turn.warn_under;
  line.classList.toggle("warn", warn);
  line.dataset.secondsLeft = left === null ? "" : String(left);
  box.textContent = left === null ? "" : `${left} s left`;
  box.classList.toggle("mine", t.your_turn);
  box.classList.toggle("late", warn || left === 0);
}

// -- the lobby --------------------------------------------------------------------------

let lobbyFilled = false;

function renderLobby(l) {
  if (!lobbyFilled) {
    $("#lobby-name").value = l.name || "";
    fill($("#host-variant"), ...l.variants.map((v) => el("option", { value: v.name, dataSeats: String(v.seats),
      text: v.seats === 4 ? v.name : `${v.name} (${v.seats} players)` })));
    hostBots();
    lobbyFilled = true;
  }
  $("#lobby-status").textContent = l.status || "";
  $("#profile-line").textContent = l.profile || "";
  const busy = l.busy;
  // Quit stays: a step that hangs (a rematch the others never answer) must not trap the page.
  for (const b of ["#host-button", "#join-button", "#scan-button", "#watch-button"]) $(b).disabled = busy;
  $("#lobby").dataset.busy = String(busy);
  fill($("#lan-tables"), ...l.tables.map((ad) => el("li", {},
    el("span", { text: `${ad.name} · ${ad.variant} to ${ad.target} · ${ad.free} free · ${ad.address}` }),
    el("button", { type: "button", disabled: busy, onclick: () => join(ad.address) }, "Join"))));
  $("#resume-panel").hidden = !l.unfinished.length;
  fill($("#resume-list"), ...l.unfinished.map((g) => el("li", {},
    el("span", { text: g.text }),
    el("button", { type: "button", disabled: busy, onclick: () => send({ type: "resume", path: g.path }) }, "Resume"))));
  fill($("#ranking tbody"), ...l.ranking.map((r) => el("tr", {},
    ...[r.rank, `${r.name} [${r.fingerprint}]`, r.level, r.xp, r.games, r.won].map((v) => el("td", { text: String(v) })))));
  fill($("#games tbody"), ...l.games.map((g) => el("tr", {},
    ...[g.date, `${g.variant} to ${g.target}`, g.players, g.score, g.result].map((v) => el("td", { text: String(v) })))));
}

// The bots a table may have: 0 to one fewer than its seats (all of them by default).
function hostBots() {
  const variant = $("#host-variant").selectedOptions[0];
  const most = variant ? Number(variant.dataset.seats) - 1 : 3;
  const box = $("#host-bots");
  const was = box.value === "" ? most : Math.min(Number(box.value), most);
  fill(box, ...Array.from({ length: most + 1 }, (_, n) => el("option", { value: String(n), text: String(n) })));
  box.value = String(was);
}

function lobbyName() { return $("#lobby-name").value.trim(); }

function join(address) {
  send({ type: "join", name: lobbyName(), address });
}

// -- input --------------------------------------------------------------------------------

function legalButtons() { return $$("#hand button.card.legal"); }

document.addEventListener("keydown", (ev) => {
  if (!state || !state.table) return;
  if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement) return;
  const t = state.table;
  if (/^[1-8]$/.test(ev.key) && t.hand.some((c) => c.playable)) {
    const c = t.hand.find((x) => x.number === Number(ev.key));
    if (c && c.legal) act(c.code);
    else if (c) toast(`${c.text} cannot be played now.`);
    ev.preventDefault();
    return;
  }
  if (ev.key === "ArrowLeft" || ev.key === "ArrowRight") {
    const cards = legalButtons().length ? legalButtons() : $$("#hand button.card");
    if (!cards.length) return;
    const i = cards.indexOf(document.activeElement);
    const step = ev.key === "ArrowLeft" ? -1 : 1;
    const next = i < 0 ? (step > 0 ? 0 : cards.length - 1) : (i + step + cards.length) % cards.length;
    cards[next].focus();
    ev.preventDefault();
  }
});

document.addEventListener("DOMContentLoaded", () => {
  // A click or a tap anywhere, or any key, puts the completed trick away (the person saw it).
  document.addEventListener("click", dismissTrick, true);
  document.addEventListener("keydown", dismissTrick, true);
  $("#summary-close").addEventListener("click", () => {
    const t = state && state.table;
    if (t && t.round_points) sessionStorage.setItem("dismissed-round", `${t.table_id}/${t.round_points.round}`);
    $("#summary").hidden = true;
  });
  $("#leave").addEventListener("click", () => send({ type: "leave" }));
  $("#rematch").addEventListener("click", () => send({ type: "rematch" }));
  let armed = null;
  $("#resign").addEventListener("click", (ev) => {
    const b = ev.currentTarget;
    if (armed) {
      clearTimeout(armed);
      armed = null;
      b.textContent = "Resign";
      send({ type: "resign" });
      return;
    }
    b.textContent = "Really resign? Click again";
    armed = setTimeout(() => { armed = null; b.textContent = "Resign"; }, 5000);
  });
  $("#chat-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("#chat-input").value.trim();
    if (text) send({ type: "chat", text });
    $("#chat-input").value = "";
  });
  $("#host-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    send({ type: "host", name: lobbyName(), variant: $("#host-variant").value,
      target: Number($("#host-target").value), bots: Number($("#host-bots").value), port: Number($("#host-port").value) });
  });
  $("#join-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    join($("#join-address").value.trim());
  });
  $("#watch-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    send({ type: "watch", code: $("#watch-code").value.trim() });
  });
  $("#stop-watching").addEventListener("click", () => send({ type: "leave" }));
  $("#host-variant").addEventListener("change", hostBots);
  $("#scan-button").addEventListener("click", () => send({ type: "scan" }));
  $("#quit-button").addEventListener("click", () => send({ type: "quit" }));
  setInterval(tick, 250);
  connect();
});
