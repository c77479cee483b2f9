/// The web view: one self-contained page (HTML, CSS and JavaScript, no external request),
/// built into the binary. It opens a WebSocket at `/view`, reads the hello (JSON) and the
/// binary frames (`ViewFrameEncoder`), and draws with canvas 2D at the display's rate
/// (requestAnimationFrame), easing toward the newest frame (seed 003's decoupled rates:
/// attack 0.35, decay 0.12 per drawn frame; peaks fall 0.006 per drawn frame).
/// docs/web.md describes it.
enum WebPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<title>spectrum</title>
<style>
  :root { color-scheme: dark; --fg: #e8e8e8; --dim: #8a8a8a; --panel: #141418; }
  html, body { margin: 0; height: 100%; background: #000; color: var(--fg); font: 14px/1.3 system-ui, sans-serif; }
  body { display: flex; flex-direction: column; }
  header { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; padding: 6px 8px; background: var(--panel); }
  header h1 { font-size: 15px; margin: 0 8px 0 0; font-weight: 600; }
  header button { background: #24242c; color: var(--fg); border: 1px solid #3a3a46; border-radius: 6px; padding: 6px 10px; font: inherit; cursor: pointer; touch-action: manipulation; }
  header button.on { background: #2f6fdf; border-color: #5b8fef; }
  header button kbd { color: var(--dim); font-size: 11px; margin-right: 4px; font-family: inherit; }
  header button.on kbd { color: #dde; }
  header select { background: #24242c; color: var(--fg); border: 1px solid #3a3a46; border-radius: 6px; padding: 5px 6px; font: inherit; }
  #inputnote { color: #ffb347; font-size: 12px; }
  #conn { margin-left: auto; color: var(--dim); font-size: 12px; }
  main { flex: 1; display: flex; min-height: 0; }
  #view { flex: 1; position: relative; min-width: 0; }
  #view canvas { position: absolute; inset: 0; width: 100%; height: 100%; touch-action: none; display: block; }
  aside { width: 240px; padding: 10px; background: var(--panel); display: flex; flex-direction: column; gap: 14px; }
  .label { color: var(--dim); font-size: 11px; text-transform: uppercase; letter-spacing: .06em; margin-bottom: 4px; }
  #vu { height: 14px; background: rgba(255,255,255,.1); border-radius: 3px; overflow: hidden; }
  #vufill { height: 100%; width: 0; background: #2ecc40; }
  #vutext { color: var(--dim); font-size: 12px; margin-top: 3px; font-variant-numeric: tabular-nums; }
  #note { font-size: 40px; font-weight: 700; line-height: 1; }
  #hz { color: var(--dim); font-variant-numeric: tabular-nums; }
  #tuner { width: 100%; height: 44px; display: block; }
  #tempo { display: flex; align-items: center; gap: 10px; }
  #bpm { font-size: 28px; font-weight: 700; font-variant-numeric: tabular-nums; }
  #flash { width: 26px; height: 26px; border-radius: 50%; background: #333; flex: none; }
  #phase { height: 6px; background: rgba(255,255,255,.1); border-radius: 3px; overflow: hidden; margin-top: 6px; }
  #phasefill { height: 100%; width: 0; background: #f5a623; }
  #hint { color: var(--dim); font-size: 11px; }
  @media (max-width: 700px) {
    header { gap: 4px; padding: 5px; }
    header h1 { display: none; }
    header button { padding: 5px 7px; font-size: 13px; }
    #conn { display: none; }
    main { flex-direction: column; }
    aside { width: auto; flex-direction: row; flex-wrap: wrap; gap: 10px; padding: 8px; }
    aside > section { flex: 1 1 140px; }
    #note { font-size: 28px; }
    #view { min-height: 55vh; }
    #hint { display: none; }
  }
</style>
</head>
<body>
<header>
  <h1 id="title">spectrum</h1>
  <button data-mode="bars"><kbd>1</kbd>Bars</button>
  <button data-mode="curve"><kbd>2</kbd>Curve</button>
  <button data-mode="circular"><kbd>3</kbd>Circular</button>
  <button data-mode="spectrogram"><kbd>4</kbd>Spectrogram</button>
  <button data-mode="surface"><kbd>5</kbd>Surface</button>
  <button data-mode="surface+"><kbd>5</kbd>Surface+</button>
  <button data-mode="waveform"><kbd>6</kbd>Waveform</button>
  <select id="input" title="input" hidden></select>
  <span id="inputnote"></span>
  <span id="conn">connecting…</span>
</header>
<main>
  <div id="view"><canvas id="canvas"></canvas></div>
  <aside>
    <section><div class="label">Level</div><div id="vu"><div id="vufill"></div></div><div id="vutext">–</div></section>
    <section><div class="label">Tuner</div><div id="note">–</div><div id="hz">no note</div><canvas id="tuner"></canvas></section>
    <section><div class="label">Tempo</div><div id="tempo"><div id="flash"></div><div id="bpm">–</div><div class="label">BPM</div></div><div id="phase"><div id="phasefill"></div></div></section>
    <section id="hint">Keys 1–6 switch modes (5 twice: Surface+). Surface: drag to rotate, wheel or pinch to zoom.</section>
  </aside>
</main>
<script>
"use strict";
const MODES = ["bars", "curve", "circular", "spectrogram", "surface", "surface+", "waveform"];
const ATTACK = 0.35, DECAY = 0.12, PEAK_FALL = 0.006;          // seed 003, per drawn frame
const VU_YELLOW = 0.6, VU_RED = 0.85;                           // seed 002
const HISTORY_ROWS_SPECTROGRAM = 128, HISTORY_ROWS_SURFACE = 60, HISTORY_ROWS_PER_SECOND = 20;
const WAVE_COLOUR = "rgba(77,217,255,0.8)";                     // (0.3, 0.85, 1.0, 0.8)
const NAMES = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"];

const canvas = document.getElementById("canvas"), g = canvas.getContext("2d");
const tunerCanvas = document.getElementById("tuner"), tg = tunerCanvas.getContext("2d");
let mode = (location.hash.slice(1) && MODES.includes(decodeURIComponent(location.hash.slice(1)))) ? decodeURIComponent(location.hash.slice(1)) : "bars";

// State fed by the WebSocket.
let bandCount = 128, rateHz = 60, centres = [];
let target = new Float32Array(128), display = new Float32Array(128), peak = new Float32Array(128);
let wave = new Float32Array(512);
let vu = 0, vuShown = 0, rmsDb = -120, peakDb = -120;
let hasNote = false, noteNumber = -1, pitchHz = 0, cents = 0, centsShown = 0;
let bpm = 0, phase = 0, phaseAt = 0, beatAt = -1e9, framesSeen = 0;
let past = [], historyEvery = 3, frameCounter = 0;

function resetArrays(n) {
  bandCount = n; target = new Float32Array(n); display = new Float32Array(n); peak = new Float32Array(n); past = [];
}

function onFrame(buffer) {
  const v = new DataView(buffer);
  if (v.getUint8(0) !== 1) return;
  const flags = v.getUint8(1), n = v.getUint16(2, true), m = v.getUint16(4, true);
  if (n !== bandCount) resetArrays(n);
  noteNumber = v.getInt16(6, true);
  vu = v.getFloat32(8, true); rmsDb = v.getFloat32(12, true); peakDb = v.getFloat32(16, true);
  pitchHz = v.getFloat32(20, true); cents = v.getFloat32(24, true);
  bpm = v.getFloat32(32, true); phase = v.getFloat32(40, true); phaseAt = performance.now();
  hasNote = (flags & 4) !== 0;
  if (flags & 1) beatAt = performance.now();
  const floats = new Float32Array(buffer, 64, 2 * n + m);
  target.set(floats.subarray(0, n));
  if (wave.length !== m) wave = new Float32Array(m);
  wave.set(floats.subarray(2 * n, 2 * n + m));
  framesSeen++;
  if (++frameCounter >= historyEvery) {            // history rows at ~20 per second, as the seed
    frameCounter = 0;
    past.push(Float32Array.from(target));
    if (past.length > HISTORY_ROWS_SPECTROGRAM) past.shift();
  }
}

// Named inputs: the one the URL asks for (?input=NAME), else the server's first; the selector
// lists the inputs the server has now (hello and "inputs" messages) and is hidden without names.
let wantedInput = new URLSearchParams(location.search).get("input"), shownInput = null;
const inputSelect = document.getElementById("input");
function onInputs(message) {
  const inputs = message.inputs || [], shown = message.input === undefined ? null : message.input;
  inputSelect.hidden = inputs.length === 0;
  inputSelect.replaceChildren(...inputs.map((name) => { const o = document.createElement("option"); o.value = o.textContent = name; return o; }));
  if (shown !== null) inputSelect.value = shown;
  const missing = wantedInput !== null && inputs.length > 0 && !inputs.includes(wantedInput);
  document.getElementById("inputnote").textContent = missing ? "no input “" + wantedInput + "”" + (shown !== null ? ": showing " + shown : "") : "";
  if (shown !== shownInput) { shownInput = shown; resetArrays(bandCount); }
}
inputSelect.addEventListener("change", () => {
  wantedInput = inputSelect.value;
  window.history.replaceState(null, "", "?input=" + encodeURIComponent(wantedInput) + location.hash);
  socket.onclose = null; socket.close(); connect();   // a fresh hello and that input's frames
});

let socket = null;
function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  socket = new WebSocket(scheme + location.host + "/view" + (wantedInput !== null ? "?input=" + encodeURIComponent(wantedInput) : ""));
  socket.binaryType = "arraybuffer";
  socket.onopen = () => setConn("connected");
  socket.onmessage = (event) => {
    if (typeof event.data === "string") {
      const hello = JSON.parse(event.data);
      if (hello.type === "inputs") { onInputs(hello); return; }
      if (hello.type !== "hello") return;
      rateHz = hello.outputRateHz || 60; centres = hello.bandCentresHz || [];
      historyEvery = Math.max(1, Math.round(rateHz / HISTORY_ROWS_PER_SECOND));
      resetArrays(hello.bandCount || 128);
      document.title = "spectrum – " + hello.name;
      document.getElementById("title").textContent = hello.name;
      onInputs(hello);
    } else {
      onFrame(event.data);
    }
  };
  socket.onclose = () => { setConn("disconnected – retrying"); setTimeout(connect, 1000); };
}
function setConn(text) { document.getElementById("conn").textContent = text; }

// Colours.
function ramp(t) {                                // blue → cyan → green → yellow → red
  t = Math.min(1, Math.max(0, t));
  const s = [[0, 0, 1], [0, 1, 1], [0, 1, 0], [1, 1, 0], [1, 0, 0]];
  const x = t * 4, i = Math.min(3, Math.floor(x)), f = x - i;
  return [s[i][0] + (s[i + 1][0] - s[i][0]) * f, s[i][1] + (s[i + 1][1] - s[i][1]) * f, s[i][2] + (s[i + 1][2] - s[i][2]) * f];
}
function heat(v) {                                // black → dark blue → cyan → yellow → red
  v = Math.min(1, Math.max(0, v));
  const s = [[0, 0, 0], [0, 0, 0.8], [0, 1, 1], [1, 1, 0], [1, 0.3, 0]];
  const x = v * 4, i = Math.min(3, Math.floor(x)), f = x - i;
  return [s[i][0] + (s[i + 1][0] - s[i][0]) * f, s[i][1] + (s[i + 1][1] - s[i][1]) * f, s[i][2] + (s[i + 1][2] - s[i][2]) * f];
}
function css(c, k = 1, a = 1) {
  return "rgba(" + Math.round(Math.min(1, c[0] * k) * 255) + "," + Math.round(Math.min(1, c[1] * k) * 255) + "," + Math.round(Math.min(1, c[2] * k) * 255) + "," + a + ")";
}

// Layout.
let W = 0, H = 0, dpr = 1;
function resize() {
  dpr = window.devicePixelRatio || 1;
  const r = canvas.getBoundingClientRect();
  W = Math.max(1, Math.round(r.width * dpr)); H = Math.max(1, Math.round(r.height * dpr));
  if (canvas.width !== W || canvas.height !== H) { canvas.width = W; canvas.height = H; }
  const t = tunerCanvas.getBoundingClientRect();
  tunerCanvas.width = Math.max(1, Math.round(t.width * dpr)); tunerCanvas.height = Math.max(1, Math.round(t.height * dpr));
}
window.addEventListener("resize", resize);

function plotArea() {                             // spectrum area with margins for the axis labels
  const m = 8 * dpr, bottom = 18 * dpr;
  return { x: m, y: m, w: W - 2 * m, h: H - m - bottom };
}
function frequencyAxis(a) {
  if (!centres.length) return;
  g.fillStyle = "#777"; g.font = (10 * dpr) + "px system-ui, sans-serif"; g.textAlign = "center"; g.textBaseline = "top";
  for (const f of [50, 100, 200, 500, 1000, 2000, 5000, 10000]) {
    let best = 0;
    for (let i = 0; i < centres.length; i++) if (Math.abs(Math.log(centres[i] / f)) < Math.abs(Math.log(centres[best] / f))) best = i;
    if (Math.abs(Math.log(centres[best] / f)) > 0.2) continue;
    const x = a.x + (best + 0.5) / bandCount * a.w;
    g.fillText(f >= 1000 ? (f / 1000) + "k" : String(f), x, a.y + a.h + 4 * dpr);
  }
}

// The six modes.
function drawBars() {
  const a = plotArea(), bw = a.w / bandCount, gap = bw > 4 * dpr ? 1 * dpr : 0;
  for (let i = 0; i < bandCount; i++) {
    const c = ramp(i / (bandCount - 1)), h = display[i] * a.h, x = a.x + i * bw;
    if (h > 0.5) {
      const grad = g.createLinearGradient(0, a.y + a.h, 0, a.y + a.h - h);
      grad.addColorStop(0, css(c, 0.35)); grad.addColorStop(1, css(c));
      g.fillStyle = grad; g.fillRect(x, a.y + a.h - h, bw - gap, h);
    }
    g.fillStyle = "rgba(255,255,255,0.9)";
    g.fillRect(x, a.y + a.h - peak[i] * a.h - 1.5 * dpr, bw - gap, 2 * dpr);
  }
  frequencyAxis(a);
}

function drawCurve() {
  const a = plotArea(), X = (i) => a.x + (i + 0.5) / bandCount * a.w, Y = (v) => a.y + a.h - v * a.h;
  const grad = g.createLinearGradient(a.x, 0, a.x + a.w, 0), fill = g.createLinearGradient(a.x, 0, a.x + a.w, 0);
  for (let k = 0; k <= 4; k++) { grad.addColorStop(k / 4, css(ramp(k / 4), 1.2)); fill.addColorStop(k / 4, css(ramp(k / 4), 0.6, 0.4)); }
  g.beginPath(); g.moveTo(X(0), a.y + a.h);
  for (let i = 0; i < bandCount; i++) g.lineTo(X(i), Y(display[i]));
  g.lineTo(X(bandCount - 1), a.y + a.h); g.closePath();
  g.fillStyle = fill; g.fill();
  g.beginPath();
  for (let i = 0; i < bandCount; i++) (i ? g.lineTo : g.moveTo).call(g, X(i), Y(display[i]));
  g.strokeStyle = grad; g.lineWidth = 2.5 * dpr; g.lineJoin = "round"; g.stroke();
  g.fillStyle = "rgba(255,255,255,0.85)";
  const s = 2.5 * dpr;
  for (let i = 0; i < bandCount; i++) g.fillRect(X(i) - s / 2, Y(peak[i]) - s / 2, s, s);
  frequencyAxis(a);
}

function drawCircular() {
  const cx = W / 2, cy = H / 2, unit = Math.min(W, H), inner = 0.10 * unit * 1.2, span = 0.30 * unit * 1.2;
  const half = Math.PI / bandCount * 0.8;
  for (let i = 0; i < bandCount; i++) {
    const angle = i * (2 * Math.PI / bandCount) - Math.PI / 2, outer = inner + display[i] * span, c = ramp(i / (bandCount - 1));
    g.beginPath();
    g.moveTo(cx + inner * Math.cos(angle - half), cy + inner * Math.sin(angle - half));
    g.lineTo(cx + outer * Math.cos(angle - half), cy + outer * Math.sin(angle - half));
    g.lineTo(cx + outer * Math.cos(angle + half), cy + outer * Math.sin(angle + half));
    g.lineTo(cx + inner * Math.cos(angle + half), cy + inner * Math.sin(angle + half));
    g.closePath(); g.fillStyle = css(c); g.fill();
    const p = inner + peak[i] * span;
    g.beginPath(); g.arc(cx, cy, p, angle - half, angle + half); g.strokeStyle = "rgba(255,255,255,0.85)"; g.lineWidth = 2 * dpr; g.stroke();
  }
  g.beginPath(); g.arc(cx, cy, inner - 3 * dpr, 0, 2 * Math.PI); g.strokeStyle = "rgba(255,255,255,0.15)"; g.lineWidth = 1 * dpr; g.stroke();
}

let heatImage = null;
function drawSpectrogram() {
  const a = plotArea(), rows = HISTORY_ROWS_SPECTROGRAM;
  if (!heatImage || heatImage.width !== bandCount) heatImage = new ImageData(bandCount, rows);
  const d = heatImage.data;
  d.fill(0);
  for (let r = 0; r < rows; r++) {                // newest row at the bottom, oldest at the top
    const row = past[past.length - rows + r];
    for (let b = 0; b < bandCount; b++) {
      const c = heat(row ? row[b] : 0), o = 4 * (r * bandCount + b);
      d[o] = c[0] * 255; d[o + 1] = c[1] * 255; d[o + 2] = c[2] * 255; d[o + 3] = 255;
    }
  }
  const off = drawSpectrogram.off || (drawSpectrogram.off = document.createElement("canvas"));
  off.width = bandCount; off.height = rows;
  off.getContext("2d").putImageData(heatImage, 0, 0);
  g.imageSmoothingEnabled = false;
  g.drawImage(off, a.x, a.y, a.w, a.h);
  frequencyAxis(a);
}

// 3D surface: recent rows as a lit terrain (Lambert + ambient), orbit camera, painter's order.
const camera = { azimuth: -0.55, elevation: 0.55, distance: 3.3 };
function drawSurface(ridgelines) {
  const rows = Math.min(HISTORY_ROWS_SURFACE, past.length), cols = Math.min(64, bandCount), step = bandCount / cols;
  const aspect = W / H, yScale = Math.max(0.6, Math.min(1.2, 0.6 + (aspect - 0.55) * 3));   // seed: 0.6 compact … 1.2 full
  const ca = Math.cos(camera.azimuth), sa = Math.sin(camera.azimuth), ce = Math.cos(camera.elevation), se = Math.sin(camera.elevation);
  const eye = [camera.distance * ce * sa, camera.distance * se, camera.distance * ce * ca];
  const fwd = norm([-eye[0], 0.25 - eye[1], -eye[2]]), right = norm(cross(fwd, [0, 1, 0])), up = cross(right, fwd);
  const focal = (W / H < 1 ? 1.1 : 1.4) * Math.min(W, H);   // portrait (a phone): farther, so the rotated mesh fits
  const light = norm([0.4, 1.0, 0.6]);
  // Grid points: x = frequency −1..1, y = amplitude, z = time (oldest −1 at the back, newest +1 in front).
  const P = [];
  for (let r = 0; r < HISTORY_ROWS_SURFACE; r++) {
    const row = past[past.length - HISTORY_ROWS_SURFACE + r], line = [];
    for (let c = 0; c < cols; c++) {
      let v = 0;
      if (row) for (let k = Math.floor(c * step); k < Math.floor((c + 1) * step); k++) v = Math.max(v, row[k]);
      if (r === HISTORY_ROWS_SURFACE - 1) { v = 0; for (let k = Math.floor(c * step); k < Math.floor((c + 1) * step); k++) v = Math.max(v, display[k]); }
      line.push([-1 + 2 * c / (cols - 1), v * yScale, -1 + 2 * r / (HISTORY_ROWS_SURFACE - 1)]);
    }
    P.push(line);
  }
  const project = (p) => {
    const d = [p[0] - eye[0], p[1] - eye[1], p[2] - eye[2]], z = dot(d, fwd);
    return [W / 2 + focal * dot(d, right) / z, H / 2 - focal * dot(d, up) / z, z];
  };
  const S = P.map((line) => line.map(project));
  const quads = [];
  for (let r = 0; r < HISTORY_ROWS_SURFACE - 1; r++) {
    for (let c = 0; c < cols - 1; c++) {
      const p00 = P[r][c], p01 = P[r][c + 1], p10 = P[r + 1][c], p11 = P[r + 1][c + 1];
      const n = norm(cross(sub(p10, p00), sub(p01, p00)));
      const depth = (S[r][c][2] + S[r][c + 1][2] + S[r + 1][c][2] + S[r + 1][c + 1][2]) / 4;
      quads.push([depth, r, c, Math.abs(dot(n, light))]);
    }
  }
  quads.sort((a, b) => b[0] - a[0]);              // far to near
  const age = (r) => 0.35 + 0.65 * r / (HISTORY_ROWS_SURFACE - 1);
  for (const [, r, c, lambert] of quads) {
    const a = S[r][c], b = S[r][c + 1], d = S[r + 1][c + 1], e = S[r + 1][c];
    if (a[2] <= 0.05 || b[2] <= 0.05 || d[2] <= 0.05 || e[2] <= 0.05) continue;
    const height = (P[r][c][1] + P[r][c + 1][1] + P[r + 1][c][1] + P[r + 1][c + 1][1]) / (4 * yScale);
    const shade = (0.25 + 0.75 * lambert) * (0.3 + 0.7 * Math.min(1, height * 1.5)) * age(r);
    g.beginPath(); g.moveTo(a[0], a[1]); g.lineTo(b[0], b[1]); g.lineTo(d[0], d[1]); g.lineTo(e[0], e[1]); g.closePath();
    const col = css(ramp(c / (cols - 2)), shade);
    g.fillStyle = col; g.fill(); g.strokeStyle = col; g.lineWidth = 0.6; g.stroke();
    if (ridgelines) {                             // surface+: the bright top edge of each row
      g.beginPath(); g.moveTo(e[0], e[1]); g.lineTo(d[0], d[1]);
      g.strokeStyle = css(ramp(c / (cols - 2)), 1.3 * age(r + 1), 0.9); g.lineWidth = 1.2 * dpr; g.stroke();
    }
  }
  if (!rows) { g.fillStyle = "#666"; g.textAlign = "center"; g.font = (13 * dpr) + "px system-ui"; g.fillText("waiting for frames…", W / 2, H / 2); }
}
function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
function norm(a) { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; }

function drawWaveform() {
  const mid = H / 2, amp = H * 0.42, m = 8 * dpr;
  g.fillStyle = "rgba(255,255,255,0.15)"; g.fillRect(m, mid - 0.5 * dpr, W - 2 * m, 1 * dpr);
  g.beginPath();
  for (let i = 0; i < wave.length; i++) {
    const x = m + i / (wave.length - 1) * (W - 2 * m), y = mid - Math.max(-1, Math.min(1, wave[i])) * amp;
    (i ? g.lineTo : g.moveTo).call(g, x, y);
  }
  g.strokeStyle = WAVE_COLOUR; g.lineWidth = 1.8 * dpr; g.lineJoin = "round"; g.stroke();
}

// Orbit camera input: pointer drag rotates (mouse and touch), wheel or pinch zooms.
const pointers = new Map(); let pinch = 0;
canvas.addEventListener("pointerdown", (e) => { canvas.setPointerCapture(e.pointerId); pointers.set(e.pointerId, [e.clientX, e.clientY]); });
canvas.addEventListener("pointerup", (e) => { pointers.delete(e.pointerId); pinch = 0; });
canvas.addEventListener("pointercancel", (e) => { pointers.delete(e.pointerId); pinch = 0; });
canvas.addEventListener("pointermove", (e) => {
  if (!pointers.has(e.pointerId)) return;
  const last = pointers.get(e.pointerId); pointers.set(e.pointerId, [e.clientX, e.clientY]);
  if (pointers.size === 1) {
    camera.azimuth -= (e.clientX - last[0]) * 0.008;
    camera.elevation = Math.max(0.05, Math.min(1.45, camera.elevation + (e.clientY - last[1]) * 0.006));
  } else if (pointers.size === 2) {
    const [p, q] = [...pointers.values()], span = Math.hypot(p[0] - q[0], p[1] - q[1]);
    if (pinch) zoom(pinch / span);
    pinch = span;
  }
});
canvas.addEventListener("wheel", (e) => { e.preventDefault(); zoom(Math.exp(e.deltaY * 0.001)); }, { passive: false });
function zoom(factor) { camera.distance = Math.max(1.6, Math.min(8, camera.distance * factor)); }

// Modes: buttons and keys 1–6 (5 toggles surface / surface+).
function setMode(next) {
  mode = next;
  for (const b of document.querySelectorAll("header button")) b.classList.toggle("on", b.dataset.mode === mode);
  if (decodeURIComponent(location.hash.slice(1)) !== mode) window.history.replaceState(null, "", "#" + mode);
}
for (const b of document.querySelectorAll("header button")) b.addEventListener("click", () => setMode(b.dataset.mode));
window.addEventListener("hashchange", () => {                 // a link or bookmark to #mode
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (MODES.includes(wanted) && wanted !== mode) setMode(wanted);
});
window.addEventListener("keydown", (e) => {
  const keys = { "1": "bars", "2": "curve", "3": "circular", "4": "spectrogram", "5": mode === "surface" ? "surface+" : "surface", "6": "waveform" };
  if (keys[e.key]) setMode(keys[e.key]);
});

// Side panel: VU, tuner, tempo.
function drawPanel(now) {
  vuShown += (vu - vuShown) * (vu > vuShown ? 0.5 : 0.15);
  const fill = document.getElementById("vufill");
  fill.style.width = (Math.min(1, Math.max(0, vuShown)) * 100).toFixed(1) + "%";
  fill.style.background = vuShown >= VU_RED ? "#ff4136" : vuShown >= VU_YELLOW ? "#ffdc00" : "#2ecc40";
  document.getElementById("vutext").textContent = framesSeen ? "RMS " + rmsDb.toFixed(1) + " dBFS · peak " + peakDb.toFixed(1) + " dBFS" : "–";
  document.getElementById("note").textContent = hasNote ? NAMES[noteNumber % 12] + (Math.floor(noteNumber / 12) - 1) : "–";
  document.getElementById("hz").textContent = hasNote ? pitchHz.toFixed(1) + " Hz · " + (cents >= 0 ? "+" : "") + cents.toFixed(0) + " ct" : "no note";
  centsShown += ((hasNote ? cents : 0) - centsShown) * 0.3;
  drawTuner();
  document.getElementById("bpm").textContent = bpm > 0 ? bpm.toFixed(1) : "–";
  const since = now - beatAt, flash = Math.max(0, 1 - since / 180);
  document.getElementById("flash").style.background = flash > 0 ? "rgba(255,170,40," + (0.3 + 0.7 * flash) + ")" : "#333";
  // The beat phase between frames: advanced at the tempo from the newest frame's phase.
  const shownPhase = bpm > 0 ? (phase + (now - phaseAt) / 1000 * bpm / 60) % 1 : 0;
  document.getElementById("phasefill").style.width = (shownPhase * 100).toFixed(1) + "%";
}
function drawTuner() {
  const w = tunerCanvas.width, h = tunerCanvas.height, m = 6 * dpr, x0 = m, x1 = w - m;
  const at = (c) => x0 + (c + 50) / 100 * (x1 - x0);   // the needle and the marks share this scale
  tg.clearRect(0, 0, w, h);
  tg.fillStyle = "#777"; tg.font = (9 * dpr) + "px system-ui"; tg.textAlign = "center"; tg.textBaseline = "bottom";
  for (let c = -50; c <= 50; c += 10) {
    const x = at(c), long = c % 50 === 0 || c === 0;
    tg.fillRect(x - 0.5 * dpr, h * 0.25, 1 * dpr, long ? h * 0.45 : h * 0.25);
    if (c % 50 === 0) { tg.textAlign = c < 0 ? "left" : c > 0 ? "right" : "center"; tg.fillText((c > 0 ? "+" : "") + c, c < 0 ? x0 : c > 0 ? x1 : x, h); }
  }
  if (hasNote) {
    const x = at(Math.max(-50, Math.min(50, centsShown)));
    tg.fillStyle = Math.abs(cents) <= 5 ? "#2ecc40" : "#ffdc00";
    tg.fillRect(x - 1.5 * dpr, 0, 3 * dpr, h * 0.8);
  }
}

function frame(now) {
  resize();
  // Decoupled rates: ease toward the newest frame on every drawn frame; peaks fall slowly.
  for (let i = 0; i < bandCount; i++) {
    const t = target[i];
    display[i] += (t - display[i]) * (t > display[i] ? ATTACK : DECAY);
    peak[i] = display[i] > peak[i] ? display[i] : Math.max(0, peak[i] - PEAK_FALL);
  }
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.fillStyle = "#000"; g.fillRect(0, 0, W, H);
  if (mode === "bars") drawBars();
  else if (mode === "curve") drawCurve();
  else if (mode === "circular") drawCircular();
  else if (mode === "spectrogram") drawSpectrogram();
  else if (mode === "surface") drawSurface(false);
  else if (mode === "surface+") drawSurface(true);
  else drawWaveform();
  drawPanel(now);
  requestAnimationFrame(frame);
}

setMode(mode);
resize();
connect();
requestAnimationFrame(frame);
</script>
</body>
</html>
"""#
}
