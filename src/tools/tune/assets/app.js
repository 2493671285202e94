// lanes tune: the page. Plain JS, no libraries. One preview request in flight at a time;
// changes made meanwhile are sent together when it returns, so previews never queue up.
'use strict';

const QUAD = 'perspective.src';
const QUAD_NAMES = ['top-left', 'top-right', 'bottom-left', 'bottom-right'];
const state = {
  specs: [], reasons: {}, loaded: {}, defaults: {}, params: {}, stills: [], dst: null,
  page: 0, pageSize: 12, quadStill: 0, quadSize: null,
  inflight: false, dirty: false, updates: 0, drag: -1,
};
const $ = (id) => document.getElementById(id);
const clone = (v) => JSON.parse(JSON.stringify(v));
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function api(method, path, body) {
  const opts = { method };
  if (body !== undefined) {
    opts.headers = { 'Content-Type': 'application/json' };
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  let j;
  try { j = await r.json(); } catch (e) { j = { error: `HTTP ${r.status}` }; }
  if (!r.ok) throw new Error(j.error || `HTTP ${r.status}`);
  return j;
}

function showError(msg) {
  const el = $('error');
  el.textContent = msg;
  el.hidden = false;
  document.querySelectorAll('.param').forEach((p) => {
    p.classList.toggle('invalid', msg.includes(p.dataset.key + ' ') || msg.includes(p.dataset.key + '[') );
  });
  $('grid').style.opacity = '0.55';
}

function clearError() {
  $('error').hidden = true;
  document.querySelectorAll('.param.invalid').forEach((p) => p.classList.remove('invalid'));
  $('grid').style.opacity = '';
}

// ---- controls -------------------------------------------------------------------------

function buildControls() {
  const box = $('controls');
  box.textContent = '';
  let group = null;
  for (const s of state.specs) {
    if (s.group !== group) {
      group = s.group;
      const h = document.createElement('h2');
      h.textContent = group;
      box.appendChild(h);
    }
    const row = document.createElement('div');
    row.className = 'param' + (s.kind === 'bool' ? ' flag' : '');
    row.dataset.key = s.key;
    const short = s.key.split('.').pop();
    const id = 'p-' + s.key.replace('.', '-');
    row.title = `${s.key}: ${s.help} (default ${state.defaults[s.key]})`;
    if (s.kind === 'bool') {
      const lab = document.createElement('label');
      const cb = document.createElement('input');
      cb.type = 'checkbox';
      cb.id = id;
      cb.addEventListener('change', () => setParam(s.key, cb.checked));
      lab.append(cb, ' ' + short);
      row.appendChild(lab);
    } else {
      const lab = document.createElement('label');
      lab.htmlFor = id;
      lab.textContent = short;
      const range = document.createElement('input');
      range.type = 'range';
      range.id = id;
      range.min = s.min;
      range.max = s.slider_max;
      range.step = 1;
      range.setAttribute('aria-label', s.key);
      const num = document.createElement('input');
      num.type = 'number';
      num.min = s.min;
      num.max = s.max;
      num.step = 1;
      num.setAttribute('aria-label', s.key + ' value');
      range.addEventListener('input', () => { num.value = range.value; setParam(s.key, Number(range.value)); });
      num.addEventListener('input', () => {
        if (num.value === '') return;
        range.value = num.value;
        setParam(s.key, Number(num.value));
      });
      row.append(lab, range, num);
    }
    const why = document.createElement('div');
    why.className = 'why';
    why.hidden = true;
    row.appendChild(why);
    box.appendChild(row);
  }
  const q = $('quad-numbers');
  q.textContent = '';
  QUAD_NAMES.forEach((name, i) => {
    const lab = document.createElement('span');
    lab.textContent = name;
    q.appendChild(lab);
    for (let c = 0; c < 2; c++) {
      const inp = document.createElement('input');
      inp.type = 'number';
      inp.step = 1;
      inp.id = `quad-${i}-${c}`;
      inp.setAttribute('aria-label', `${name} ${c ? 'y' : 'x'}`);
      inp.addEventListener('input', () => {
        if (inp.value === '') return;
        const quad = clone(state.params[QUAD]);
        quad[i][c] = Number(inp.value);
        setParam(QUAD, quad);
        drawQuad();
      });
      q.appendChild(inp);
    }
  });
}

// Why a parameter does nothing under the current values (null when it acts); the texts come
// from the server (`reasons`), the conditions mirror `Applies::acts` in params.rs.
function inactiveReason(s) {
  const p = state.params;
  const acts = {
    always: true,
    local_contrast: !p['threshold.global_max'],
    global_max: !!p['threshold.global_max'],
    sobel: !!p['threshold.sobel_enabled'],
    saturation: !!p['threshold.s_enabled'],
    video: false,
  }[s.applies];
  return acts === false ? (state.reasons[s.applies] || 'has no effect now') : null;
}

function syncControls() {
  for (const s of state.specs) {
    const row = document.querySelector(`.param[data-key="${s.key}"]`);
    const v = state.params[s.key];
    const why = inactiveReason(s);
    row.classList.toggle('inactive', !!why);
    row.querySelectorAll('input').forEach((i) => { i.disabled = !!why; });
    const note = row.querySelector('.why');
    note.hidden = !why;
    note.textContent = why || '';
    row.title = `${s.key}: ${s.help} (default ${state.defaults[s.key]})` + (why ? ` - ${why}` : '');
    if (s.kind === 'bool') {
      row.querySelector('input').checked = !!v;
    } else {
      const [range, num] = row.querySelectorAll('input');
      range.value = v;
      if (document.activeElement !== num) num.value = v;
    }
    row.classList.toggle('changed', !same(v, state.loaded[s.key]));
  }
  const quad = state.params[QUAD];
  quad.forEach((p, i) => p.forEach((v, c) => {
    const inp = $(`quad-${i}-${c}`);
    if (document.activeElement !== inp) inp.value = Math.round(v * 10) / 10;
  }));
  const changed = Object.keys(state.params).filter((k) => !same(state.params[k], state.loaded[k])).length;
  $('reset').disabled = changed === 0;
}

function setParam(key, value) {
  state.params[key] = value;
  syncControls();
  schedule();
}

// ---- grid -----------------------------------------------------------------------------

function pageCount() { return Math.max(1, Math.ceil(state.stills.length / state.pageSize)); }

function visible() {
  const from = state.page * state.pageSize;
  return state.stills.slice(from, from + state.pageSize).map((s) => s.index);
}

function buildGrid() {
  const grid = $('grid');
  grid.textContent = '';
  for (const i of visible()) {
    const card = document.createElement('div');
    card.className = 'card';
    card.id = `card-${i}`;
    card.innerHTML = `
      <div class="card-head"><span class="name"></span><span class="badges"></span>
        <button type="button" class="use-quad" title="Edit the perspective quad on this still">quad</button></div>
      <img class="overlay" alt="overlay">
      <div class="pair"><img class="mask" alt="binary mask"><img class="search" alt="search picture"></div>
      <div class="nums">…</div>`;
    card.querySelector('.name').textContent = state.stills[i].name;
    card.querySelector('.name').title = state.stills[i].name;
    card.querySelector('.use-quad').addEventListener('click', () => selectQuadStill(i));
    card.classList.toggle('quad', i === state.quadStill);
    grid.appendChild(card);
  }
  $('pageinfo').textContent = `page ${state.page + 1} of ${pageCount()} (${state.stills.length} stills)`;
  $('prev').disabled = state.page === 0;
  $('next').disabled = state.page >= pageCount() - 1;
}

function fmt(v, d) { return v === null || v === undefined ? '–' : v.toFixed(d); }

function renderStill(p) {
  if (p.index === state.quadStill) {
    if (p.birdseye) $('quad-birdseye').src = p.birdseye;
    if (p.width) state.quadSize = [p.width, p.height];
  }
  const card = $(`card-${p.index}`);
  if (!card) return;
  const badges = card.querySelector('.badges');
  badges.textContent = '';
  const nums = card.querySelector('.nums');
  if (p.error) {
    card.classList.add('missing');
    card.querySelectorAll('img').forEach((im) => im.removeAttribute('src'));
    nums.innerHTML = '';
    const e = document.createElement('div');
    e.className = 'err';
    e.textContent = p.error;
    nums.appendChild(e);
    return;
  }
  card.querySelector('img.overlay').src = p.overlay;
  card.querySelector('img.mask').src = p.mask;
  card.querySelector('img.search').src = p.search;
  const missing = [];
  if (!p.left_found) missing.push('left');
  if (!p.right_found) missing.push('right');
  card.classList.toggle('missing', missing.length > 0);
  if (missing.length) {
    const b = document.createElement('span');
    b.className = 'badge';
    b.textContent = missing.length === 2 ? 'no line found' : `${missing[0]} line not found`;
    badges.appendChild(b);
  }
  const radius = p.radius_m === null ? '–' : (p.radius_m > 3000 ? 'straight' : `${p.radius_m.toFixed(0)} m`);
  const px = (found, n) => found ? `${n}` : `<span class="bad">${n}</span>`;
  nums.innerHTML = `radius <b>${radius}</b> · offset <b>${fmt(p.offset_m, 2)} m</b> · width <b>${fmt(p.lane_width_m, 2)} m</b><br>` +
    `pixels L ${px(p.left_found, p.left_pixels)} · R ${px(p.right_found, p.right_pixels)} · mask ${p.mask_pixels} · ${p.ms.toFixed(0)} ms`;
}

// ---- requests -------------------------------------------------------------------------

function schedule() {
  state.dirty = true;
  if (!state.inflight) send();
}

async function send() {
  state.dirty = false;
  state.inflight = true;
  const stills = visible();
  if (!stills.includes(state.quadStill)) stills.push(state.quadStill);
  const t0 = performance.now();
  try {
    const res = await api('POST', '/api/preview', { params: state.params, stills, birdseye_of: state.quadStill });
    clearError();
    res.stills.forEach(renderStill);
    state.updates += 1;
    document.body.dataset.updates = state.updates;
    const shown = res.stills.filter((s) => $(`card-${s.index}`)).length;
    $('status').textContent = `${shown} stills updated in ${(performance.now() - t0).toFixed(0)} ms (server ${res.ms.toFixed(0)} ms)`;
    if (state.quadSize === null) drawQuad();
  } catch (e) {
    showError(e.message);
    $('status').textContent = 'not updated';
  } finally {
    state.inflight = false;
    if (state.dirty) send();
  }
}

async function save() {
  $('save').disabled = true;
  try {
    const res = await api('POST', '/api/save', { params: state.params });
    // The geometry ([perspective], [units]) is written whole; the rest differs from the defaults.
    let section = '';
    let n = 0;
    for (const l of res.text.split('\n')) {
      if (l.startsWith('[')) section = l;
      else if (l && !l.startsWith('#') && section !== '[perspective]' && section !== '[units]') n += 1;
    }
    $('saved').classList.add('done');
    $('saved').textContent = `saved ${res.path} (the geometry, and ${n} value${n === 1 ? ' that differs' : 's that differ'} from the defaults)`;
    document.body.dataset.saved = (Number(document.body.dataset.saved || 0) + 1).toString();
    clearError();
  } catch (e) {
    showError('not saved: ' + e.message);
  } finally {
    $('save').disabled = false;
  }
}

function reset() {
  state.params = clone(state.loaded);
  syncControls();
  drawQuad();
  schedule();
}

// ---- perspective quad -----------------------------------------------------------------

function selectQuadStill(i) {
  state.quadStill = i;
  $('quad-still').value = String(i);
  document.querySelectorAll('.card').forEach((c) => c.classList.toggle('quad', c.id === `card-${i}`));
  state.quadSize = null;
  $('quad-img').src = `/api/frame/${i}?scale=2`;
  schedule();
}

function quadScale() {
  const img = $('quad-img');
  const size = state.quadSize || [img.naturalWidth * 2, img.naturalHeight * 2];
  const w = img.clientWidth, h = img.clientHeight;
  if (!w || !size[0]) return null;
  return { sx: w / size[0], sy: h / size[1], w, h };
}

function drawQuad() {
  const cv = $('quad-canvas');
  const s = quadScale();
  if (!s) return;
  const dpr = window.devicePixelRatio || 1;
  cv.width = Math.round(s.w * dpr);
  cv.height = Math.round(s.h * dpr);
  const g = cv.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, s.w, s.h);
  const q = state.params[QUAD].map(([x, y]) => [x * s.sx, y * s.sy]);
  g.lineWidth = 2;
  g.strokeStyle = 'rgba(255, 60, 60, 0.95)';
  g.beginPath();
  [0, 1, 3, 2].forEach((k, n) => (n ? g.lineTo(...q[k]) : g.moveTo(...q[k])));
  g.closePath();
  g.stroke();
  q.forEach(([x, y], k) => {
    g.beginPath();
    g.arc(x, y, k === state.drag ? 8 : 6, 0, 2 * Math.PI);
    g.fillStyle = k === state.drag ? '#ffd400' : 'rgba(255, 255, 255, 0.9)';
    g.fill();
    g.strokeStyle = '#d00';
    g.stroke();
  });
  if (state.dst) {
    // The bird's-eye view has the frame's size; the guides mark the dst rectangle's sides.
    const guides = $('guides');
    guides.textContent = '';
    const W = (state.quadSize || [1280])[0];
    for (const x of [state.dst[0][0], state.dst[1][0]]) {
      const d = document.createElement('div');
      d.style.left = `${(100 * x) / W}%`;
      guides.appendChild(d);
    }
  }
}

function pointerPos(ev) {
  const r = $('quad-canvas').getBoundingClientRect();
  return [ev.clientX - r.left, ev.clientY - r.top];
}

function setupQuadEditor() {
  const cv = $('quad-canvas');
  cv.addEventListener('pointerdown', (ev) => {
    const s = quadScale();
    if (!s) return;
    const [x, y] = pointerPos(ev);
    let best = -1, bestD = 18;
    state.params[QUAD].forEach(([qx, qy], k) => {
      const d = Math.hypot(qx * s.sx - x, qy * s.sy - y);
      if (d < bestD) { best = k; bestD = d; }
    });
    if (best >= 0) {
      state.drag = best;
      cv.setPointerCapture(ev.pointerId);
      drawQuad();
    }
  });
  cv.addEventListener('pointermove', (ev) => {
    if (state.drag < 0) return;
    const s = quadScale();
    const [x, y] = pointerPos(ev);
    const quad = clone(state.params[QUAD]);
    quad[state.drag] = [Math.round(x / s.sx), Math.round(y / s.sy)];
    state.params[QUAD] = quad;
    syncControls();
    drawQuad();
    schedule();
  });
  const end = () => { state.drag = -1; drawQuad(); };
  cv.addEventListener('pointerup', end);
  cv.addEventListener('pointercancel', end);
  $('quad-img').addEventListener('load', drawQuad);
  window.addEventListener('resize', drawQuad);
}

// ---- start ----------------------------------------------------------------------------

async function start() {
  let st;
  try {
    st = await api('GET', '/api/state');
  } catch (e) {
    showError('cannot load the tuner state: ' + e.message);
    return;
  }
  state.specs = st.specs;
  state.reasons = st.reasons || {};
  state.loaded = st.loaded;
  state.defaults = st.defaults;
  state.params = clone(st.loaded);
  state.stills = st.stills;
  state.pageSize = st.page_size;
  state.dst = st.dst;
  $('save').title = `Write the geometry and the values that differ from the defaults to ${st.save_to}`;
  $('saved').textContent = `Save writes ${st.save_to}`;
  const sel = $('quad-still');
  st.stills.forEach((s) => {
    const o = document.createElement('option');
    o.value = String(s.index);
    o.textContent = s.name;
    sel.appendChild(o);
  });
  sel.addEventListener('change', () => selectQuadStill(Number(sel.value)));
  buildControls();
  syncControls();
  buildGrid();
  setupQuadEditor();
  $('prev').addEventListener('click', () => { state.page -= 1; buildGrid(); schedule(); });
  $('next').addEventListener('click', () => { state.page += 1; buildGrid(); schedule(); });
  $('save').addEventListener('click', save);
  $('reset').addEventListener('click', reset);
  selectQuadStill(0);
}

// Exposed for the browser test and for debugging from the console.
window.tuneState = state;
start();
