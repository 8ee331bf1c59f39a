// SPDX-License-Identifier: MIT
// The page's loader (docs/web.md). The anelint CLI, compiled to WebAssembly by
// `make wasm`, runs in a worker: each run is a fresh instance whose main() gets the
// same arguments as the command line (check -f json --no-config ...), the model's
// files mounted read-only through emscripten's WORKERFS. WORKERFS reads a file
// as File.slice(off, off + n) with FileReaderSync, so the library's reads (its one
// "read a span at an offset" interface, src/base/file.c) take from the disk only
// what they ask for. No network: the worker is made from a Blob of the bundled
// module (anelint-bundle.js), the .wasm is handed over as bytes.
'use strict';

// ---------------------------------------------------------------- the worker
// Runs in the worker (its source is this function's text after the module's).
function anelintWorker() {
  let wasmBinary = null;
  function binary() {
    if (!wasmBinary) {
      const s = atob(ANELINT_WASM_BASE64);
      wasmBinary = new Uint8Array(s.length);
      for (let i = 0; i < s.length; i++) wasmBinary[i] = s.charCodeAt(i);
    }
    return wasmBinary;
  }
  // One run: a fresh instance (main() keeps no state between runs), files under /in.
  async function run(msg) {
    // stdout byte by byte (its text exactly, as the command line writes it)
    let out = new Uint8Array(1 << 16), n = 0, stderr = '';
    const M = await createAnelint({
      wasmBinary: binary(),
      stdout: (c) => {
        if (c === null) return;
        if (n === out.length) { const b = new Uint8Array(out.length * 2); b.set(out); out = b; }
        out[n++] = c & 255;
      },
      printErr: (s) => { stderr += s + '\n'; },
    });
    M._umask(0o022); // emscripten 3.1.6 starts at 0777: -o's file would be unreadable
    // WORKERFS answers readlink with EPERM where POSIX says EINVAL (not a link):
    // realpath (musl's asks readlink of every component) would then fail
    delete M.FS.filesystems.WORKERFS.node_ops.readlink;
    M.FS.mkdir('/in');
    M.FS.mount(M.FS.filesystems.WORKERFS, { blobs: msg.files.map((f) => ({ name: f.path, data: f.file })) }, '/in');
    M.FS.chdir('/in');
    const args = msg.args.slice();
    const t0 = performance.now();
    let status;
    try {
      status = M.callMain(args);
    } catch (e) {
      status = e && e.status !== undefined ? e.status : -1;
      stderr += String(e && e.message || e) + '\n';
    }
    const ms = performance.now() - t0;
    const stdout = new TextDecoder().decode(out.subarray(0, n));
    // the instance's whole memory (its wasm heap) when main returned
    const memory = M.HEAPU8 ? M.HEAPU8.length : 0;
    return { status, stdout, stderr, output: stdout, ms, memory };
  }
  self.onmessage = async (e) => {
    const msg = e.data;
    let reply;
    try {
      reply = await run(msg);
    } catch (err) {
      reply = { status: -1, stdout: '', stderr: String(err && err.message || err), output: null, ms: 0 };
    }
    reply.id = msg.id;
    self.postMessage(reply);
  };
}

// ---------------------------------------------------------------- calling it
const page = {
  worker: null,
  pending: new Map(),
  nextId: 1,
  files: null,     // [{path, file}] of the model
  root: null,      // the model's path under /in
  json: null,      // the last check's JSON text
  outputs: {},     // format -> text, for the current files and options
};

function startWorker() {
  const src = ANELINT_MODULE_SOURCE + '\nvar ANELINT_WASM_BASE64 = ' + JSON.stringify(ANELINT_WASM_BASE64) +
    ';\n(' + anelintWorker.toString() + ')();\n';
  const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
  const w = new Worker(url);
  w.onmessage = (e) => {
    const p = page.pending.get(e.data.id);
    if (p) { page.pending.delete(e.data.id); p(e.data); }
  };
  // an uncaught failure of the module (a trap: out of memory, ...): the runs
  // waiting get its message and a new worker starts
  w.onerror = (e) => { e.preventDefault(); stopWorker('the analyser failed: ' + (e.message || 'unknown error')); };
  return w;
}

// A run that has not answered after RUN_LIMIT_MS is stopped: the worker is
// terminated (whatever it was doing) and a new one started, so no model can keep
// the page busy; the CLI's own bounds on memory and work apply inside the run.
const RUN_LIMIT_MS = 120000;
function call(args, files) {
  return new Promise((resolve) => {
    const id = page.nextId++;
    const timer = setTimeout(() => {
      if (!page.pending.has(id)) return;
      page.pending.delete(id);
      stopWorker();
      resolve({ id, status: -1, stdout: '', output: '', ms: RUN_LIMIT_MS,
        stderr: 'anelint: error: stopped after ' + RUN_LIMIT_MS / 1000 + ' s\n' });
    }, RUN_LIMIT_MS);
    page.pending.set(id, (r) => { clearTimeout(timer); resolve(r); });
    page.worker.postMessage({ id, args, files: files || [] });
  });
}

// The worker ended, stopped or failed: every pending run gets an error and a
// fresh worker takes the next.
function stopWorker(why) {
  if (page.worker) page.worker.terminate();
  page.worker = startWorker();
  for (const [id, done] of page.pending) {
    page.pending.delete(id);
    done({ id, status: -1, stdout: '', output: '', ms: 0, stderr: 'anelint: error: ' + (why || 'stopped') + '\n' });
  }
}

function setStatus(text, error) {
  const s = document.getElementById('status');
  s.textContent = text;
  s.className = error ? 'error' : '';
}

// ---------------------------------------------------------------- options
function options() {
  const a = ['--no-config'];
  const t = document.getElementById('target').value;
  const os = document.getElementById('os').value;
  const cu = document.getElementById('units').value;
  if (t) a.push('--target', t);
  if (os) a.push('--os', os);
  if (cu && cu !== 'all') a.push('--compute-units', cu);
  return a;
}

// The arguments of `check` in one format, as the command line takes them.
function checkArgs(format) {
  return ['check', '-f', format].concat(options(), [page.root]);
}

async function fillOptions() {
  const r = await call(['targets', '-f', 'json'], []);
  const d = JSON.parse(r.stdout);
  const target = document.getElementById('target');
  for (const t of d.targets) {
    const o = new Option(t.name + (t.default ? ' (default)' : ''), t.id);
    if (t.default) o.selected = true;
    target.add(o);
  }
  const os = document.getElementById('os');
  os.add(new Option('newest, with the deployment range', ''));
  for (const rel of d.releases) os.add(new Option(rel.name, rel.id));
  os.add(new Option('every release (a column each)', 'all'));
  const all = new Option('every chip (a column each)', 'all');
  target.add(all);
}

// ---------------------------------------------------------------- input files
// Every File of a drop: folders walked (webkitGetAsEntry), paths kept relative.
async function filesOfDrop(dt) {
  const out = [];
  const entries = [];
  for (const item of dt.items) {
    const e = item.webkitGetAsEntry && item.webkitGetAsEntry();
    if (e) entries.push(e);
  }
  if (!entries.length) {
    for (const f of dt.files) out.push({ path: f.name, file: f });
    return out;
  }
  async function walk(entry, prefix, depth) {
    if (depth > 32) throw new Error('folders nested too deep');
    if (entry.isFile) {
      const f = await new Promise((res, rej) => entry.file(res, rej));
      out.push({ path: prefix + entry.name, file: f });
      return;
    }
    const reader = entry.createReader();
    for (;;) {
      const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
      if (!batch.length) break;
      for (const c of batch) await walk(c, prefix + entry.name + '/', depth + 1);
    }
  }
  for (const e of entries) await walk(e, '', 0);
  return out;
}

function filesOfInput(list) {
  const out = [];
  for (const f of list) out.push({ path: f.webkitRelativePath || f.name, file: f });
  return out;
}

// The model among the files: a .zip is unpacked first; then the top-most
// .mlpackage / .mlmodelc folder, else the one .mlmodel.
async function modelOf(files) {
  if (files.length === 1 && /\.zip$/i.test(files[0].path)) files = await unzip(files[0].file);
  let best = null;
  for (const f of files) {
    const parts = f.path.split('/');
    for (let i = 0; i < parts.length - 1; i++) {
      if (/\.(mlpackage|mlmodelc)$/i.test(parts[i])) {
        const root = parts.slice(0, i + 1).join('/');
        if (!best || root.length < best.length) best = root;
        break;
      }
    }
  }
  if (!best) {
    const m = files.filter((f) => /\.mlmodel$/i.test(f.path));
    if (m.length === 1) best = m[0].path;
    else if (m.length > 1) throw new Error('several .mlmodel files: drop one');
  }
  if (!best) throw new Error('no .mlmodel file, .mlpackage or .mlmodelc folder in what was dropped');
  return { files, root: best };
}

// ---------------------------------------------------------------- .zip
// A .zip read through its central directory: only the entries' own bytes are
// sliced out, stored ones as they are, deflated ones through DecompressionStream.
const ZIP_MAX_ENTRIES = 100000;
async function unzip(file) {
  const u8 = async (off, n) => new Uint8Array(await file.slice(off, off + n).arrayBuffer());
  const tailLen = Math.min(file.size, 65536 + 22);
  const tail = await u8(file.size - tailLen, tailLen);
  const dv = new DataView(tail.buffer);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) if (dv.getUint32(i, true) === 0x06054b50) { eocd = i; break; }
  if (eocd < 0) throw new Error('not a .zip (no end of central directory)');
  const count = dv.getUint16(eocd + 10, true);
  const cdSize = dv.getUint32(eocd + 12, true), cdOff = dv.getUint32(eocd + 16, true);
  if (count === 0xffff || cdOff === 0xffffffff) throw new Error('ZIP64 archives are not read yet');
  if (count > ZIP_MAX_ENTRIES || cdOff + cdSize > file.size) throw new Error('the .zip central directory is damaged');
  const cd = await u8(cdOff, cdSize);
  const c = new DataView(cd.buffer);
  const out = [];
  const dec = new TextDecoder();
  for (let i = 0, p = 0; i < count; i++) {
    if (p + 46 > cd.length || c.getUint32(p, true) !== 0x02014b50) throw new Error('the .zip central directory is damaged');
    const method = c.getUint16(p + 10, true);
    const csize = c.getUint32(p + 20, true), usize = c.getUint32(p + 24, true);
    const nlen = c.getUint16(p + 28, true), xlen = c.getUint16(p + 30, true), klen = c.getUint16(p + 32, true);
    const local = c.getUint32(p + 42, true);
    if (p + 46 + nlen > cd.length) throw new Error('the .zip central directory is damaged');
    const name = dec.decode(cd.subarray(p + 46, p + 46 + nlen));
    p += 46 + nlen + xlen + klen;
    if (name.endsWith('/') || name.startsWith('__MACOSX/')) continue;
    if (name.split('/').some((s) => s === '..' || s === '')) throw new Error('the .zip names a path outside it: ' + name);
    const lh = new DataView((await u8(local, 30)).buffer);
    if (lh.getUint32(0, true) !== 0x04034b50) throw new Error('the .zip entry ' + name + ' is damaged');
    const start = local + 30 + lh.getUint16(26, true) + lh.getUint16(28, true);
    if (start + csize > file.size) throw new Error('the .zip entry ' + name + ' runs past its end');
    const raw = file.slice(start, start + csize);
    let blob;
    if (method === 0) blob = raw;
    else if (method === 8) blob = await new Response(raw.stream().pipeThrough(new DecompressionStream('deflate-raw'))).blob();
    else throw new Error('the .zip entry ' + name + ' uses compression method ' + method);
    if (method === 8 && blob.size !== usize) throw new Error('the .zip entry ' + name + ' inflates to the wrong size');
    out.push({ path: name, file: new File([blob], name.split('/').pop()) });
  }
  return out;
}

// ---------------------------------------------------------------- showing a check
function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

function bar(units, total) {
  let h = '<div class="bar" aria-hidden="true">';
  for (const u of ['ane', 'gpu', 'gpu_or_cpu', 'cpu']) {
    const n = units && units[u] || 0;
    if (n && total) h += '<i class="' + u + '" style="width:' + (100 * n / total) + '%"></i>';
  }
  return h + '</div>';
}

function showSummary(d) {
  let h = '<table><tr><th>model</th><th>type</th><th>layers/ops</th><th>on the ANE</th><th>units</th><th>verdicts</th><th>rules that fire</th></tr>';
  for (const m of d.models || []) {
    const s = m.summary || {};
    const u = s.units || {};
    const v = s.verdicts || {};
    const share = s.ane_share !== undefined ? (100 * s.ane_share).toFixed(1) + '%' : '?';
    const rules = (s.rules || []).map((r) => r.rule + ' ×' + r.count).join(', ');
    h += '<tr><td>' + esc(m.path || '') + (m.error ? ' <b class="u-cpu">' + esc(m.error.message || m.error) + '</b>' : '') +
      '</td><td>' + esc(m.type || '') + '</td><td>' + (s.layers || 0) + '</td><td>' + share + bar(u, s.layers) +
      '</td><td>' + Object.keys(u).filter((k) => u[k]).map((k) => '<span class="u-' + k + '">' + k + ' ' + u[k] + '</span>').join(' ') +
      '</td><td>' + Object.keys(v).map((k) => k + ' ' + v[k]).join(', ') + '</td><td>' + esc(rules) + '</td></tr>';
  }
  document.getElementById('summary').innerHTML = h + '</table>';
}

function layerRows(d) {
  const rows = [];
  for (const m of d.models || []) {
    for (const l of m.layers || []) {
      if (l.type === 'const') continue;
      const ev = l.evidence ? (typeof l.evidence === 'string' ? l.evidence : JSON.stringify(l.evidence)) : '';
      // a layer moved off the ANE by another rule (the partition, a model-level rule)
      // has no reason of its own: say what moved it, and why the verdict is uncertain
      const why = [l.reason, l.moved_by ? 'moved by ' + l.moved_by : '', l.uncertain ? 'uncertain: ' + l.uncertain : '']
        .filter((x) => x).join('; ');
      rows.push({ model: m.path, fn: l.function || '', name: l.name, type: l.type, unit: l.unit || '',
        verdict: l.verdict || '', confidence: l.confidence || '', rules: (l.rules || []).map((r) => r.rule || r).join(', '),
        reason: why, evidence: ev, off: l.unit !== 'ane' });
    }
  }
  return rows;
}

function showLayers() {
  if (!page.rows) return;
  const q = document.getElementById('filter').value.toLowerCase();
  const offOnly = document.getElementById('off-only').checked;
  // the function column only for a multifunction program
  const fns = new Set(page.rows.map((r) => r.fn));
  const showFn = fns.size > 1;
  let h = '<tr><th>#</th>' + (showFn ? '<th>function</th>' : '') +
    '<th>name</th><th>type</th><th>unit</th><th>verdict</th><th>confidence</th><th>rules</th><th>reason</th><th>evidence</th></tr>';
  let n = 0;
  page.rows.forEach((r, i) => {
    if (offOnly && !r.off) return;
    if (q && ![r.fn, r.name, r.type, r.unit, r.rules, r.reason].some((s) => String(s).toLowerCase().includes(q))) return;
    if (++n > 5000) return;
    h += '<tr><td>' + i + '</td>' + (showFn ? '<td>' + esc(r.fn) + '</td>' : '') + '<td>' + esc(r.name) + '</td><td>' + esc(r.type) + '</td><td class="u-' + esc(r.unit) + '">' +
      esc(r.unit) + '</td><td>' + esc(r.verdict) + '</td><td>' + esc(r.confidence) + '</td><td>' + esc(r.rules) +
      '</td><td>' + esc(r.reason) + '</td><td>' + esc(r.evidence) + '</td></tr>';
  });
  document.querySelector('#layers table').innerHTML = h;
}

const TABS = { layers: 'layers', plan: 'plan', report: 'report-wrap' };
page.tab = 'layers';
function selectTab(which) {
  page.tab = which;
  for (const t of Object.keys(TABS)) {
    document.getElementById('tab-' + t).setAttribute('aria-selected', String(t === which));
    document.getElementById('tab-' + t).tabIndex = t === which ? 0 : -1;
    document.getElementById(TABS[t]).classList.toggle('hidden', t !== which);
  }
  if (which === 'report') output('html').then((t) => { if (t !== null) document.getElementById('report').srcdoc = t; });
  // the plan as the command line prints it: segments, switches, the cheapest fixes
  // and the `anelint fix` command that removes each model-level finding
  if (which === 'plan') planText().then((t) => { document.getElementById('plan').textContent = t; });
}

async function planText() {
  if (page.outputs.plan !== undefined) return page.outputs.plan;
  const r = await call(['plan', '--color', 'never'].concat(options(), [page.root]), page.files);
  page.outputs.plan = r.status >= 0 && r.status < 2 ? r.output : firstLine(r.stderr);
  return page.outputs.plan;
}

// The report in one format for the current model and options (cached).
async function output(format) {
  if (page.outputs[format] !== undefined) return page.outputs[format];
  const r = await call(checkArgs(format), page.files);
  if (r.status < 0 || r.status >= 2) { setStatus(firstLine(r.stderr) || 'no ' + format + ' output', true); return null; }
  page.outputs[format] = r.output;
  return r.output;
}

function firstLine(s) {
  return (s || '').split('\n').filter((l) => l.trim())[0] || '';
}

async function check() {
  page.outputs = {};
  page.rows = null;
  setStatus('checking ' + page.root + '…');
  const r = await call(checkArgs('json'), page.files);
  // exit 2 (usage), 3 (invalid model), 4 (I/O): the error, one line
  if (r.status < 0 || r.status >= 2) {
    document.getElementById('result').classList.add('hidden');
    setStatus(firstLine(r.stderr) || 'the check failed (exit ' + r.status + ')', true);
    window.anelintLast = { status: r.status, json: r.output, stderr: r.stderr };
    return;
  }
  page.outputs.json = r.output;
  let d;
  try { d = JSON.parse(r.output); } catch (e) { setStatus('unreadable JSON from the check: ' + e.message, true); return; }
  showSummary(d);
  page.rows = layerRows(d);
  showLayers();
  document.getElementById('cli').innerHTML = 'same as <code>' + esc(['anelint'].concat(checkArgs('json')).join(' ')) + '</code>';
  document.getElementById('result').classList.remove('hidden');
  document.getElementById('rerun').disabled = false;
  const err = firstLine(r.stderr);
  setStatus('checked ' + page.root + ' in ' + r.ms.toFixed(0) + ' ms' + (err ? ' (' + err + ')' : ''), false);
  window.anelintLast = { status: r.status, json: r.output, stderr: r.stderr, ms: r.ms, memory: r.memory };
  if (page.tab !== 'layers') selectTab(page.tab);
}

async function load(files) {
  try {
    window.anelintLast = null;
    const m = await modelOf(files);
    page.files = m.files;
    page.root = m.root;
    await check();
  } catch (e) {
    setStatus(String(e.message || e), true);
    window.anelintLast = { status: -1, json: null, stderr: String(e.message || e) };
  }
}

function download(format) {
  output(format).then((t) => {
    if (t === null) return;
    const type = { json: 'application/json', sarif: 'application/sarif+json', html: 'text/html' }[format];
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([t], { type }));
    a.download = page.root.split('/').pop().replace(/\.(mlmodel|mlpackage|mlmodelc)$/i, '') + '.anelint.' + format;
    document.body.appendChild(a);
    a.click();
    a.remove();
  });
}

// ---------------------------------------------------------------- wiring
window.addEventListener('DOMContentLoaded', async () => {
  const drop = document.getElementById('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    try { load(await filesOfDrop(e.dataTransfer)); } catch (err) { setStatus(String(err.message || err), true); }
  });
  document.getElementById('pick-file').addEventListener('change', (e) => load(filesOfInput(e.target.files)));
  document.getElementById('pick-dir').addEventListener('change', (e) => load(filesOfInput(e.target.files)));
  for (const id of ['target', 'os', 'units']) document.getElementById(id).addEventListener('change', () => { if (page.root) check(); });
  document.getElementById('rerun').addEventListener('click', () => { if (page.root) check(); });
  document.getElementById('filter').addEventListener('input', showLayers);
  document.getElementById('off-only').addEventListener('change', showLayers);
  const order = Object.keys(TABS);
  for (const t of order) {
    const b = document.getElementById('tab-' + t);
    b.addEventListener('click', () => selectTab(t));
    // arrow keys move between the tabs (the tablist pattern)
    b.addEventListener('keydown', (e) => {
      const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
      if (!step) return;
      const next = order[(order.indexOf(t) + step + order.length) % order.length];
      selectTab(next);
      document.getElementById('tab-' + next).focus();
      e.preventDefault();
    });
  }
  // the drop zone from the keyboard: Enter or Space opens the file picker
  drop.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') { document.getElementById('pick-file').click(); e.preventDefault(); }
  });
  for (const b of document.querySelectorAll('#exports button')) b.addEventListener('click', () => download(b.dataset.format));
  // the test drives this (tests/web.py): the JSON text of a check, exactly
  window.anelintCheck = async (files) => { await load(files); return window.anelintLast; };
  try {
    page.worker = startWorker();
    await fillOptions();
    setStatus('Ready: drop a model, or pick one.');
    window.anelintReady = true;
  } catch (e) {
    setStatus('the analyser did not start: ' + (e.message || e), true);
  }
});
