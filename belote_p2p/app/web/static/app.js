// The table page: a view of one seat, drawn from the JSON state the server sends over a
// WebSocket after every change, and the seat's input (clicks, keys) sent back as action
// codes. Every rule is checked in Python; this page only shows and asks.
//
// In the reader's language: the page is made in it (<html lang>), the state comes in it,
// and this script's own words are looked up in the catalog the server wrote into the page
// (_(), ngettext(), pgettext(), as gettext does; the catalogs' extraction finds them here).
// A language chosen on another tab makes this one load again in it.
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

// -- words --------------------------------------------------------------------------------

const LANG = document.documentElement.lang || "en";
const CATALOG = (() => {
  try {
    return JSON.parse(document.getElementById("catalog").textContent);
  } catch (e) {
    return { messages: {}, plurals: {}, plural_forms: "" };
  }
})();

function _(msgid) { return CATALOG.messages[msgid] || msgid; }

function pgettext(context, msgid) { return CATALOG.messages[`${context}\u0004${msgid}`] || msgid; }

// The catalog's plural rule ("nplurals=2; plural=(n > 1);"), a C expression of n, read by a
// small parser (the page's Content-Security-Policy allows no eval): the form's index for n.
function pluralRule(header) {
  const english = (n) => (n === 1 ? 0 : 1);
  const found = /plural\s*=\s*([^;]+)/.exec(header || "");
  if (!found) return english;
  const tokens = found[1].match(/\d+|n|&&|\|\||[=!<>]=|[-+*\/%?:()<>!]/g) || [];
  const RANK = { "||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, ">": 4, "<=": 4, ">=": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6 };
  const apply = (op, a, b) => ({
    "||": a || b ? 1 : 0, "&&": a && b ? 1 : 0, "==": a === b ? 1 : 0, "!=": a !== b ? 1 : 0,
    "<": a < b ? 1 : 0, ">": a > b ? 1 : 0, "<=": a <= b ? 1 : 0, ">=": a >= b ? 1 : 0,
    "+": a + b, "-": a - b, "*": a * b, "/": b ? Math.trunc(a / b) : 0, "%": b ? a % b : 0,
  })[op];
  let at = 0;
  const next = () => tokens[at++];
  function unary() {
    const t = next();
    if (t === "(") { const inner = ternary(); if (next() !== ")") throw new Error("plural: )"); return inner; }
    if (t === "!") { const inner = unary(); return (n) => (inner(n) ? 0 : 1); }
    if (t === "-") { const inner = unary(); return (n) => -inner(n); }
    if (t === "n") return (n) => n;
    if (/^\d+$/.test(t || "")) { const v = Number(t); return () => v; }
    throw new Error(`plural: ${t}`);
  }
  function binary(least) {
    let left = unary();
    while (RANK[tokens[at]] >= least) {
      const op = next();
      const right = binary(RANK[op] + 1);
      const l = left;
      left = (n) => apply(op, l(n), right(n));
    }
    return left;
  }
  function ternary() {
    const test = binary(1);
    if (tokens[at] !== "?") return test;
    next();
    const yes = ternary();
    if (next() !== ":") throw new Error("plural: :");
    const no = ternary();
    return (n) => (test(n) ? yes(n) : no(n));
  }
  try {
    const rule = ternary();
    return at === tokens.length ? (n) => Number(rule(n)) : english;
  } catch (e) {
    return english;
  }
}
const pluralIndex = pluralRule(CATALOG.plural_forms);

function ngettext(singular, plural, n) {
  const forms = CATALOG.plurals[singular];
  const form = forms && forms[pluralIndex(n)];
  return form || (n === 1 ? singular : plural);
}

// A message's {name} fields filled ({{ and }} are braces), as Python's str.format does.
function format(text, values) {
  return text.replace(/\{\{|\}\}|\{(\w+)\}/g, (m, name) => {
    if (m === "{{") return "{";
    if (m === "}}") return "}";
    return name in values ? String(values[name]) : m;
  });
}

// A number as the reader's language writes it (1,000 · 1 000).
const numbers = new Intl.NumberFormat(LANG);
function num(n) { return typeof n === "number" ? numbers.format(n) : String(n); }

// A word at the head of a button: "prendre" is "Prendre".
function cap(text) { return text ? text.charAt(0).toLocaleUpperCase(LANG) + text.slice(1) : text; }

function cardUrl(name) { return `cards/${LANG}/${name}.svg`; }

function cardImg(card, extra = {}) {
  return el("img", { src: cardUrl(card.code), alt: card.label, title: card.text, ...extra });
}

// -- the connection ---------------------------------------------------------------------

let socket = null;
let state = null;
let retry = 500;
// A navigation under way (this page's own language switch, a link): the page it loads
// comes in the language chosen, and a reload now would abort it.
let leaving = false;
window.addEventListener("beforeunload", () => { leaving = true; });

function connect() {
  socket = new WebSocket(`ws://${location.host}${location.pathname.replace(/[^/]*$/, "")}ws?lang=${LANG}`);
  socket.addEventListener("open", () => {
    retry = 500;
    document.body.dataset.connected = "true";
    $("#banner").textContent = "";
  });
  socket.addEventListener("message", (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "state") {
      if (msg.chosen && msg.chosen !== LANG) {
        if (!leaving) location.reload();  // a language chosen on another tab
        return;
      }
      state = msg;
      render();
    } else if (msg.type === "error") {
      toast(msg.text);
    }
  });
  socket.addEventListener("close", () => {
    document.body.dataset.connected = "false";
    if (state && state.closing) {
      $("#banner").textContent = _("The table page is closed: you may close this tab.");
      return;
    }
    $("#banner").textContent = format(_("This page lost its belote-p2p process: reconnecting… "
      + "If the command stopped, resume the game ({command}): this tab reconnects by itself."),
      { command: `belote-p2p resume --web --web-port ${location.port}` });
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 5000);
  });
}

function send(msg) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(msg));
  else toast(_("Not connected to the game."));
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
  // The language switch sits in the header of what is on show.
  const head = table ? $("#top") : $("#lobby .head-end");
  if ($("#langs").parentElement !== head) head.prepend($("#langs"));
  for (const a of $$("#langs a")) a.setAttribute("aria-current", String(a.hreflang === LANG));
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
  document.title = t.your_turn ? _("▶ Your turn · Belote p2p") : "Belote p2p";
  $("#title").textContent = t.title;

  const sc = t.scores;
  fill($("#scores"),
    ...sc.sides.map((x) => el("span", { class: `side ${x.ours ? "us" : "them"}`, text: `${x.name} ${num(x.score)}` })),
    el("span", { class: "dim", text: format(_("to {target}"), { target: num(sc.target) }) }),
    sc.pending ? el("span", { class: "badge", text: format(_("pot {points}"), { points: num(sc.pending) }) }) : null,
  );
  $("#contract").textContent = t.contract.text;
  $("#resign").hidden = t.finished || !!t.ended || t.watching;
  $("#hint-panel").hidden = !t.hints_enabled || t.finished;
  $("#hint").disabled = !t.your_turn;
  $("#hint-line").textContent = t.hint || "";
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
  $("#bids").textContent = t.bids.length
    ? t.bids.map((b) => format(_("{name}: {bid}"), { name: b.name, bid: b.text })).join(" · ") : _("none yet");
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
    s.dealer ? el("span", { class: "badge dealer", text: _("dealer") }) : null,
    s.taker ? el("span", { class: "badge taker", text: _("taker") }) : null,
    s.partner ? el("span", { class: "badge", text: _("partner") }) : null,
    s.connected ? null : el("span", { class: "badge off", text: _("disconnected") }),
  );
  const said = [...s.announced, ...s.belote.map((c) => format(_("belote {card}"), { card: c }))];
  const bid = t.phase !== "play" ? [...t.bids].reverse().find((b) => b.seat === s.seat) : null;
  fill(box, 
    el("div", { class: "name", text: s.you ? format(_("You ({name})"), { name: s.name }) : s.name }),
    s.you ? null : el("div", { class: "fp", title: _("key fingerprint"), text: s.fingerprint }),
    s.open_hand ? el("div", { class: "open-hand", role: "group", "aria-label": format(_("{name}'s open hand"), { name: s.name }) },
      ...s.open_hand.map((c) => cardImg(c, { alt: c.label }))) : null,
    s.dummy && t.dummy_line ? el("div", { class: "said left", text: t.dummy_line }) : null,
    s.you || !s.cards || s.piles || s.open_hand ? null : el("div", { class: "backs",
      "aria-label": format(ngettext("{n} card", "{n} cards", s.cards), { n: s.cards }) },
      ...Array.from({ length: s.cards }, () => el("img", { src: cardUrl("back"), alt: "" }))),
    s.you || !s.piles ? null : el("div", { class: "piles", role: "group", "aria-label": format(_("{name}'s piles"), { name: s.name }) },
      ...s.piles.map((p) => pile(p, p.card ? cardImg(p.card) : null))),
    badges,
    bid ? el("div", { class: "said", text: bid.text }) : null,
    said.length ? el("div", { class: "said", text: said.join(", ") }) : null,
  );
}

// Two-handed: one pile, the card on top (``top``: an image or a button, none when the pile
// has no card to play) and a card back peeking under it for a face-down card.
function pile(p, top) {
  let label;
  if (p.card) {
    label = format(p.hidden ? _("pile {number}: {card}, a face-down card under it") : _("pile {number}: {card}"),
      { number: p.number, card: p.card.label });
  } else {
    label = format(p.hidden ? _("pile {number}: no card, a face-down card under it") : _("pile {number}: no card"),
      { number: p.number });
  }
  return el("div", { class: "pile" + (top ? "" : " bare"), dataPile: String(p.number), dataHidden: String(p.hidden), "aria-label": label },
    p.hidden ? el("img", { class: "under", src: cardUrl("back"), alt: "" }) : null,
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
    if (trick.leader === s.seat) tags.push(_("led"));
    if (trick.master === s.seat) tags.push(held ? _("★ won") : _("★ master"));
    fill(slot, cardImg(c), tags.length ? el("span", { class: "tag", text: tags.join(" · ") }) : null);
  }
  $("#trick").hidden = t.phase !== "play";
}

function renderTurned(t) {
  const box = $("#turned");
  const show = t.turned && (t.phase === "take-first" || t.phase === "take-second");
  box.hidden = !show;
  if (show) fill(box, cardImg(t.turned), el("span", { class: "dim", text: _("turned card") }));
}

// A trump's button: its suit's shape and its name (b.trumps: "cœur", "sans atout").
function suitButton(b, letter, code, label) {
  const img = "SHDC".includes(letter) ? el("img", { src: cardUrl(`suit-${letter}`), alt: "" }) : null;
  return el("button", { type: "button", class: "suit", dataCode: code, "aria-label": label, onclick: () => act(code) },
    img, ` ${b.trumps[letter] || letter}`);
}

// A bid's button: its words as the model offers it (b.texts: "prendre", "passer").
function bidButton(b, code, extra = {}) {
  return el("button", { type: "button", dataCode: code, onclick: () => act(code), ...extra }, cap(b.texts[code] || code));
}

function renderBidding(t) {
  const box = $("#bidding");
  const b = t.bidding;
  if (!b) { fill(box, ); pickedValue = null; return; }
  const rows = [];
  const simple = [];
  if (b.take) simple.push(bidButton(b, "take", { class: "primary" }));
  for (const s of b.choose) simple.push(suitButton(b, s, `choose ${s}`, b.texts[`choose ${s}`]));
  if (simple.length) rows.push(el("div", { class: "row" }, ...simple));
  const values = [...b.values.map(String), ...(b.capot ? ["capot"] : []), ...(b.generale ? ["generale"] : [])];
  if (values.length) {
    if (pickedValue && !values.includes(pickedValue)) pickedValue = null;
    rows.push(el("div", { class: "row", role: "group", "aria-label": _("contract") },
      ...values.map((v) => el("button", { type: "button", dataValue: v, "aria-pressed": String(v === pickedValue),
        onclick: () => { pickedValue = v; renderBidding(t); } }, b.contracts[v] || v))));
    rows.push(el("div", { class: "row", role: "group", "aria-label": _("trump") },
      ...b.suits.map((s) => {
        const code = pickedValue ? `${pickedValue} ${s}` : "";
        const btn = suitButton(b, s, code, b.texts[code] || b.trumps[s] || s);
        btn.disabled = !pickedValue;
        return btn;
      })));
  }
  const last = [];
  for (const code of ["coinche", "surcoinche", "pass"]) if (b[code]) last.push(bidButton(b, code));
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

function cannotPlay(c) { return format(_("{card} cannot be played now."), { card: c.text }); }

function renderHand(t) {
  const box = $("#hand");
  const focused = document.activeElement && document.activeElement.classList.contains("card") ? document.activeElement.dataset.code : null;
  const playing = t.hand.some((c) => c.playable);
  box.classList.toggle("playing", playing);
  const button = (c) => {
    let label = c.number === null ? c.label : format(_("{number}: {card}"), { number: c.number, card: c.label });
    if (playing) label = format(c.legal ? _("{card}, playable") : _("{card}, cannot be played now"), { card: label });
    return el("button", {
      type: "button", class: "card" + (c.legal ? " legal" : ""), dataCode: c.code, dataNumber: c.number === null ? null : String(c.number),
      "aria-label": label, "aria-disabled": playing && !c.legal ? "true" : null,
      onclick: () => { if (c.legal) act(c.code); else if (playing) toast(cannotPlay(c)); },
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
  if (!lt) { box.textContent = _("none yet"); return; }
  const names = Object.fromEntries(t.seats.map((s) => [s.seat, s.shown_name]));  // "You": the model's word
  fill(box, 
    ...lt.cards.map((c) => el("figure", { class: c.seat === lt.master ? "won" : "" }, cardImg(c, { alt: c.label }),
      el("figcaption", { text: names[c.seat] }))),
    el("span", { class: "dim", text: format(_("→ {name} ({points})"), { name: names[lt.master], points: num(lt.points) }) }),
  );
  box.setAttribute("aria-label", t.last_trick_text);
}

function renderChat(t) {
  fill($("#chat"), ...t.chat.map((c) => el("li", {}, el("b", { text: format(_("{name}:"), { name: c.name }) + " " }), c.text)));
  const input = $("#chat-input");
  input.disabled = !t.chat_enabled;
  input.placeholder = t.chat_enabled ? _("Say something") : _("Chat is not available at this table yet");
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
  $("#summary-title").textContent = rp ? rp.title : (over ? _("Game over") : _("Round over"));
  const rows = [];
  if (rp) {
    // A column per side (a team with four seats, a player with two or three), ours first.
    const sides = rp.sides;
    const named = (x) => (x.takers ? format(t.teams ? _("{side} (takers)") : _("{side} (taker)"), { side: x.name }) : x.name);
    rows.push(el("tr", {}, el("th", { text: "" }),
      ...sides.map((x) => el("th", { class: x.ours ? "us" : "them", text: named(x) }))));
    const line = (label, field) => el("tr", {}, el("td", { text: label }), ...sides.map((x) => el("td", { text: num(x[field]) })));
    const verdict = rp.sweep ? format(_("{verdict} ({sweep})"), { verdict: rp.verdict, sweep: rp.sweep }) : rp.verdict;
    rows.push(el("tr", {}, el("td", { colspan: String(sides.length + 1), text: verdict })));
    rows.push(line(_("Tricks"), "tricks"));
    rows.push(line(_("Card points"), "card_points"));
    rows.push(line(_("with dix de der"), "dix_de_der"));
    if (sides.some((x) => x.announcements)) rows.push(line(_("Announcements"), "announcements"));
    if (sides.some((x) => x.belote)) rows.push(line(_("Belote"), "belote"));
    rows.push(line(_("Round score"), "score"));
    rows.push(line(_("Game"), "game"));
  }
  fill($("#summary-points"), ...rows);
  fill($("#summary-lines"), ...t.last_summary.map((s) => el("li", { text: s })));
  $("#final").hidden = !t.ended;
  $("#final").textContent = t.ended || "";
  $("#score-sheet").hidden = !(over && t.sheet);
  $("#score-sheet").textContent = t.sheet || "";
  $("#result-line").textContent = t.result || "";
  $("#summary-close").hidden = over;
  renderRematch(t);
  $("#leave").hidden = !t.finished;
}

// The question of another game, once the game is over (who offers it, its rules): the
// answer goes as the page is left, as the terminal's does.
function renderRematch(t) {
  $("#rematch-question").hidden = !t.rematch_enabled;
  $("#rematch-question").textContent = t.rematch_question || "";
  $("#rematch").hidden = !t.rematch_enabled;
  $("#rematch-decline").hidden = !t.rematch_enabled;
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
  const tail = (touchScreen() ? turn.tail_touch : turn.tail) || "";
  let left = null;
  if (deadlineAt !== null && turn.seat !== null && turn.seconds_left !== null) {
    left = Math.max(0, Math.round((deadlineAt - performance.now()) / 1000));
  }
  const text = turn.head + (left === null ? "" : " " + format(_("({seconds} s left)"), { seconds: left })) + tail;
  if (line.textContent !== text) line.textContent = text;
  const warn = left !== null && t.your_turn && left <= turn.warn_under;
  line.classList.toggle("warn", warn);
  line.dataset.secondsLeft = left === null ? "" : String(left);
  box.textContent = left === null ? "" : format(_("{seconds} s left"), { seconds: left });
  box.classList.toggle("mine", t.your_turn);
  box.classList.toggle("late", warn || left === 0);
}

// -- the lobby --------------------------------------------------------------------------

let lobbyFilled = false;

function renderLobby(l) {
  if (!lobbyFilled) {
    $("#lobby-name").value = l.name || "";
    fill($("#host-variant"), ...l.variants.map((v) => el("option", { value: v.name, dataSeats: String(v.seats),
      text: v.seats === 4 ? v.text : format(ngettext("{variant} ({n} player)", "{variant} ({n} players)", v.seats),
        { variant: v.text, n: v.seats }) })));
    hostBots();
    lobbyFilled = true;
  }
  $("#lobby-status").textContent = l.status || "";
  $("#profile-line").textContent = l.profile || "";
  renderHosting(l);
  renderJoinError(l);
  const busy = l.busy;
  // Quit stays: a step that hangs (a rematch the others never answer) must not trap the page.
  for (const b of ["#host-button", "#join-button", "#scan-button", "#watch-button"]) $(b).disabled = busy;
  $("#lobby").dataset.busy = String(busy);
  fill($("#lan-tables"), ...l.tables.map((ad) => el("li", {},
    el("span", { text: ad.text }),
    el("button", { type: "button", disabled: busy, onclick: () => join(ad.address) }, _("Join")))));
  renderPublic(l, busy);
  $("#resume-panel").hidden = !l.unfinished.length;
  fill($("#resume-list"), ...l.unfinished.map((g) => el("li", {},
    el("span", { text: g.text }),
    el("button", { type: "button", disabled: busy, onclick: () => send({ type: "resume", path: g.path }) }, _("Resume")))));
  fill($("#ranking tbody"), ...l.ranking.map((r) => el("tr", {},
    ...[r.texts[0], `${r.name} [${r.fingerprint}]`, ...r.texts.slice(1)].map((v) => el("td", { text: v })))));
  fill($("#games tbody"), ...l.games.map((g) => el("tr", {},
    ...[g.date_text, g.variant_text, g.players, g.score, g.result].map((v) => el("td", { text: String(v) })),
    el("td", {}, el("a", { href: `replay/${g.table_id}`, target: "_blank", rel: "noopener" }, g.replay)))));
  renderProgress(l.progress);
}

// The public tables of the relay's directory (web --relay), each with its "take a seat".
function renderPublic(l, busy) {
  $("#public-panel").hidden = !l.directory;
  $("#public-button").disabled = busy;
  fill($("#public-tables"), ...l.public.map((t) => el("li", {},
    el("span", { text: t.text }),
    el("button", { type: "button", disabled: busy,
      onclick: () => send({ type: "take-seat", id: t.id, name: $("#lobby-name").value }) }, _("Take a seat")))));
}

// Stop hosting: only while the table hosted from this page waits for its players.
function renderHosting(l) {
  $("#stop-hosting").hidden = !l.stoppable;
}

// Why the join field's entry is neither an invitation code nor an address, under it.
function renderJoinError(l) {
  const box = $("#join-error");
  box.hidden = !l.join_error;
  box.textContent = l.join_error || "";
  $("#join-address").setAttribute("aria-invalid", l.join_error ? "true" : "false");
}

// The person's average loss a decision, game by game (oldest first): a small line.
function renderProgress(p) {
  $("#progress-line").textContent = p.text;
  const svg = $("#progress");
  svg.hidden = p.losses.length < 2;
  if (svg.hidden) return;
  const top = Math.max(...p.losses, 1);
  const step = 200 / (p.losses.length - 1);
  const points = p.losses.map((x, i) => `${(i * step).toFixed(1)},${(48 - (x / top) * 44).toFixed(1)}`);
  const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
  line.setAttribute("points", points.join(" "));
  svg.replaceChildren(line);
}

// The bots a table may have: 0 to one fewer than its seats (all of them by default).
function hostBots() {
  const variant = $("#host-variant").selectedOptions[0];
  const most = variant ? Number(variant.dataset.seats) - 1 : 3;
  const box = $("#host-bots");
  const was = box.value === "" ? most : Math.min(Number(box.value), most);
  fill(box, ...Array.from({ length: most + 1 }, (unused, n) => el("option", { value: String(n), text: String(n) })));
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
    else if (c) toast(cannotPlay(c));
    ev.preventDefault();
    return;
  }
  if ((ev.key === "h" || ev.key === "H") && t.hints_enabled && t.your_turn) {
    send({ type: "hint" });
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
  $("#rematch").addEventListener("click", () => send({ type: "rematch", again: true }));
  $("#rematch-decline").addEventListener("click", () => send({ type: "rematch", again: false }));
  $("#stop-hosting").addEventListener("click", () => send({ type: "stop" }));
  let armed = null;
  $("#resign").addEventListener("click", (ev) => {
    const b = ev.currentTarget;
    if (armed) {
      clearTimeout(armed);
      armed = null;
      b.textContent = _("Resign");
      send({ type: "resign" });
      return;
    }
    b.textContent = _("Really resign? Click again");
    armed = setTimeout(() => { armed = null; b.textContent = _("Resign"); }, 5000);
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
      target: Number($("#host-target").value), bots: Number($("#host-bots").value), port: Number($("#host-port").value),
      hints: $("#host-hints").checked });
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
  $("#hint").addEventListener("click", () => send({ type: "hint" }));
  $("#host-variant").addEventListener("change", hostBots);
  $("#scan-button").addEventListener("click", () => send({ type: "scan" }));
  $("#public-button").addEventListener("click", () => send({ type: "public" }));
  $("#quit-button").addEventListener("click", () => send({ type: "quit" }));
  setInterval(tick, 250);
  connect();
});
