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
    if (msg.memory) {
      // fix: the model's files copied into the instance's in-memory file system
      // (MEMFS), which maps files as the native build does: a rewrite needs every
      // byte of weight.bin and of a big .mlmodel, which WORKERFS (no mmap) would
      // leave unread (src/base/file.c); the rewritten model is written there too
      const reader = new FileReaderSync();
      const made = new Set(['/in']);
      for (const f of msg.files) {
        const parts = f.path.split('/');
        let dir = '/in';
        for (const p of parts.slice(0, -1)) {
          dir += '/' + p;
          if (!made.has(dir)) { M.FS.mkdir(dir); made.add(dir); }
        }
        M.FS.writeFile('/in/' + f.path, new Uint8Array(reader.readAsArrayBuffer(f.file)));
      }
    } else {
      M.FS.mount(M.FS.filesystems.WORKERFS, { blobs: msg.files.map((f) => ({ name: f.path, data: f.file })) }, '/in');
    }
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
    const reply = { status, stdout, stderr, output: stdout, ms, memory };
    // fix: what it wrote, as it is (.mlmodel) or as a .zip of the folder (.mlpackage)
    if (msg.collect && status === 0) {
      const at = M.FS.analyzePath('/in/' + msg.collect);
      if (at.exists && M.FS.isDir(at.object.mode)) {
        const entries = [];
        const walk = (dir, rel, depth) => {
          for (const n of M.FS.readdir(dir).sort()) {
            if (n === '.' || n === '..') continue;
            const p = dir + '/' + n, mode = M.FS.stat(p).mode;
            if (M.FS.isDir(mode) && depth < 32) walk(p, rel + n + '/', depth + 1);
            else if (M.FS.isFile(mode)) entries.push({ name: rel + n, data: M.FS.readFile(p) });
          }
        };
        walk('/in/' + msg.collect, msg.collect.split('/').pop() + '/', 0);
        reply.download = zipStored(entries);
        reply.downloadName = msg.collect.split('/').pop() + '.zip';
      } else if (at.exists) {
        reply.download = M.FS.readFile('/in/' + msg.collect);
        reply.downloadName = msg.collect.split('/').pop();
      }
    }
    return reply;
  }
  // A .zip of entries [{name, data}], stored (no compression: weights hardly
  // compress), fixed dates, UTF-8 names: what unzip gives back is the bytes as written.
  function zipStored(entries) {
    const crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
    const crc32 = (d) => {
      let c = 0xffffffff;
      for (let i = 0; i < d.length; i++) c = crcTable[(c ^ d[i]) & 255] ^ (c >>> 8);
      return (c ^ 0xffffffff) >>> 0;
    };
    const enc = new TextEncoder();
    const recs = entries.map((e) => ({ name: enc.encode(e.name), data: e.data, crc: crc32(e.data), off: 0 }));
    let size = 22;
    for (const r of recs) size += 30 + 46 + 2 * r.name.length + r.data.length;
    if (size > 0xffffffff || recs.length > 0xffff) throw new Error('the rewritten model is too large for a .zip without ZIP64');
    const buf = new Uint8Array(size), dv = new DataView(buf.buffer);
    const DOS_DATE = (0 << 9) | (1 << 5) | 1; // 1980-01-01, the earliest: no clock in the bytes
    let p = 0;
    for (const r of recs) {
      r.off = p;
      dv.setUint32(p, 0x04034b50, true); dv.setUint16(p + 4, 20, true); dv.setUint16(p + 6, 0x0800, true);
      dv.setUint16(p + 8, 0, true); dv.setUint16(p + 10, 0, true); dv.setUint16(p + 12, DOS_DATE, true);
      dv.setUint32(p + 14, r.crc, true); dv.setUint32(p + 18, r.data.length, true); dv.setUint32(p + 22, r.data.length, true);
      dv.setUint16(p + 26, r.name.length, true); dv.setUint16(p + 28, 0, true);
      buf.set(r.name, p + 30); buf.set(r.data, p + 30 + r.name.length);
      p += 30 + r.name.length + r.data.length;
    }
    const cd = p;
    for (const r of recs) {
      dv.setUint32(p, 0x02014b50, true); dv.setUint16(p + 4, 20, true); dv.setUint16(p + 6, 20, true);
      dv.setUint16(p + 8, 0x0800, true); dv.setUint16(p + 10, 0, true); dv.setUint16(p + 12, 0, true);
      dv.setUint16(p + 14, DOS_DATE, true); dv.setUint32(p + 16, r.crc, true);
      dv.setUint32(p + 20, r.data.length, true); dv.setUint32(p + 24, r.data.length, true);
      dv.setUint16(p + 28, r.name.length, true); // extra, comment, disk, attributes: 0
      dv.setUint32(p + 42, r.off, true);
      buf.set(r.name, p + 46);
      p += 46 + r.name.length;
    }
    dv.setUint32(p, 0x06054b50, true); dv.setUint16(p + 8, recs.length, true); dv.setUint16(p + 10, recs.length, true);
    dv.setUint32(p + 12, p - cd, true); dv.setUint32(p + 16, cd, true);
    return buf;
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
    self.postMessage(reply, reply.download ? [reply.download.buffer] : []);
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
function call(args, files, extra) {
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
    page.worker.postMessage(Object.assign({ id, args, files: files || [] }, extra || {}));
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
// Bounds on what a .zip may make the page inflate (a zip bomb): at most
// ZIP_MAX_BYTES in all, at most ZIP_MAX_RATIO times the archive's size (plus 64 MB),
// and no entry past the size its directory declares (the stream is cut there).
const ZIP_MAX_ENTRIES = 100000;
const ZIP_MAX_BYTES = 2 ** 31;
const ZIP_MAX_RATIO = 200;
async function inflateAtMost(raw, limit, name) {
  const reader = raw.stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  const parts = [];
  let n = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      n += value.length;
      if (n > limit) { reader.cancel().catch(() => {}); throw new Error('the .zip entry ' + name + ' inflates past its declared size'); }
      parts.push(value);
    }
  } catch (e) {
    if (/declared size/.test(e.message)) throw e;
    throw new Error('the .zip entry ' + name + ' does not inflate: ' + (e.message || e));
  }
  return new Blob(parts);
}

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
  const budget = Math.min(ZIP_MAX_BYTES, ZIP_MAX_RATIO * file.size + (64 << 20));
  let total = 0;
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
    total += usize;
    if (usize === 0xffffffff || csize === 0xffffffff) throw new Error('ZIP64 archives are not read yet');
    if (total > budget) throw new Error('the .zip would inflate to more than ' + (budget / 1048576).toFixed(0) + ' MB (a zip bomb?)');
    const raw = file.slice(start, start + csize);
    let blob;
    if (method === 0) {
      if (csize !== usize) throw new Error('the .zip entry ' + name + ' is damaged (stored with two sizes)');
      blob = raw;
    } else if (method === 8) blob = await inflateAtMost(raw, usize, name);
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
  let h = '<table><tr><th>model</th><th>type</th><th>layers/ops</th><th>on the ANE</th><th>units</th><th>verdicts</th></tr>';
  let fired = '';
  for (const m of d.models || []) {
    const s = m.summary || {};
    const u = s.units || {};
    const v = s.verdicts || {};
    const share = s.ane_share !== undefined ? (100 * s.ane_share).toFixed(1) + '%' : '?';
    const rules = (s.rules || []).map((r) => r.rule + ' ×' + r.count).join(', ');
    h += '<tr><td>' + esc(m.path || '') + (m.error ? ' <b class="u-cpu">' + esc(m.error.message || m.error) + '</b>' : '') +
      '</td><td>' + esc(m.type || '') + '</td><td>' + (s.layers || 0) + '</td><td>' + share + bar(u, s.layers) +
      '</td><td>' + Object.keys(u).filter((k) => u[k]).map((k) => '<span class="u-' + k + '">' + k + ' ' + u[k] + '</span>').join(' ') +
      '</td><td>' + Object.keys(v).map((k) => k + ' ' + v[k]).join(', ') + '</td></tr>';
    // the rules below the table: a long list would squeeze its columns on a tablet
    if (rules) fired += '<p class="fired">rules that fire' + ((d.models || []).length > 1 ? ' (' + esc(m.path || '') + ')' : '') + ': ' + esc(rules) + '</p>';
  }
  document.getElementById('summary').innerHTML = h + '</table>' + fired;
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

// rows drawn at most (a table's layout grows with its rows: 5000 took seconds)
const LAYER_ROWS_MAX = 2000;
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
    if (++n > LAYER_ROWS_MAX) return;
    h += '<tr><td>' + i + '</td>' + (showFn ? '<td>' + esc(r.fn) + '</td>' : '') + '<td>' + esc(r.name) + '</td><td>' + esc(r.type) + '</td><td class="u-' + esc(r.unit) + '">' +
      esc(r.unit) + '</td><td>' + esc(r.verdict) + '</td><td>' + esc(r.confidence) + '</td><td>' + esc(r.rules) +
      '</td><td>' + esc(r.reason) + '</td><td>' + esc(r.evidence) + '</td></tr>';
  });
  if (n > LAYER_ROWS_MAX) h += '<tr><td colspan="10">… ' + (n - LAYER_ROWS_MAX) + ' more: the filter narrows the table</td></tr>';
  document.querySelector('#layers table').innerHTML = h;
}

// ---------------------------------------------------------------- the graph
// The dataflow of each function, drawn in layers (an op one row below the lowest
// op it reads), coloured by the unit it runs on; an uncertain verdict is drawn
// dashed and pale with a "?". Const ops are left out (they only feed weights). The
// op list beside it is the keyboard's way in: arrow keys move, Enter opens the
// op's rule, reason, evidence and confidence, Esc closes.
const GRAPH_MAX_OPS = 3000;        // drawn; the list has every op
const NODE_W = 172, NODE_H = 36, GAP_X = 18, GAP_Y = 28;

function buildOps(d) {
  const ops = [];
  for (const m of d.models || []) {
    for (const l of m.layers || []) {
      if (l.type === 'const') continue;
      ops.push({ model: m.path || '', fn: l.function || '', layer: l, unit: l.unit || 'unknown',
        uncertain: l.verdict === 'uncertain', preds: [] });
    }
  }
  // edges: the latest writer of a name, in model order, to each reader of it
  let writer = new Map(), group = null;
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i], key = o.model + '\u0000' + o.fn;
    if (key !== group) { writer = new Map(); group = key; }
    o.group = key;
    const seen = new Set();
    for (const n of o.layer.inputs || []) {
      const w = writer.get(n);
      if (w !== undefined && !seen.has(w)) { seen.add(w); o.preds.push(w); }
    }
    for (const n of o.layer.outputs || []) writer.set(n, i);
  }
  return ops;
}

function graphSvg(ops) {
  const n = Math.min(ops.length, GRAPH_MAX_OPS);
  const rank = new Array(n).fill(0), x = new Array(n).fill(0);
  const groups = [];
  for (let i = 0; i < n; i++) {
    const o = ops[i];
    if (!groups.length || groups[groups.length - 1].key !== o.group) groups.push({ key: o.group, fn: o.fn, model: o.model, ops: [] });
    groups[groups.length - 1].ops.push(i);
    for (const p of o.preds) if (p < n) rank[i] = Math.max(rank[i], rank[p] + 1);
  }
  let h = '', width = 0, top = 8;
  const edges = [];
  for (const g of groups) {
    const rows = [];
    for (const i of g.ops) (rows[rank[i]] = rows[rank[i]] || []).push(i);
    // within a row: by the mean position of what each op reads (fewer crossings)
    let widest = 0;
    for (const row of rows) {
      if (!row) continue;
      const key = (i) => {
        const ps = ops[i].preds.filter((p) => p < n);
        return ps.length ? ps.reduce((a, p) => a + x[p], 0) / ps.length : i;
      };
      row.sort((a, b) => key(a) - key(b) || a - b);
      row.forEach((i, k) => { x[i] = k; });
      widest = Math.max(widest, row.length);
    }
    const label = (g.fn && g.fn !== 'main' ? 'function ' + g.fn : '') + (groups.length > 1 && g.fn === 'main' ? 'function main' : '');
    if (label) { h += '<text class="glabel" x="8" y="' + (top + 14) + '">' + esc(label) + '</text>'; top += 24; }
    const pos = new Map();
    rows.forEach((row, r) => {
      if (!row) return;
      const off = (widest - row.length) * (NODE_W + GAP_X) / 2;
      row.forEach((i, k) => pos.set(i, [8 + off + k * (NODE_W + GAP_X), top + r * (NODE_H + GAP_Y)]));
    });
    for (const i of g.ops) {
      const [nx, ny] = pos.get(i);
      for (const p of ops[i].preds) {
        if (!pos.has(p)) continue;
        const [px, py] = pos.get(p);
        const x1 = px + NODE_W / 2, y1 = py + NODE_H, x2 = nx + NODE_W / 2, y2 = ny, dy = (y2 - y1) / 2;
        edges.push('M' + x1 + ' ' + y1 + 'C' + x1 + ' ' + (y1 + dy) + ' ' + x2 + ' ' + (y2 - dy) + ' ' + x2 + ' ' + y2);
      }
    }
    for (const i of g.ops) {
      const o = ops[i], l = o.layer, [nx, ny] = pos.get(i);
      const name = l.name.length > 22 ? l.name.slice(0, 21) + '…' : l.name;
      h += '<g class="node u-' + esc(o.unit) + (o.uncertain ? ' uncertain' : '') + '" id="node-' + i + '" data-op="' + i +
        '" transform="translate(' + nx + ' ' + ny + ')"><title>' + esc(l.name + ' (' + l.type + '): ' + unitText(o)) + '</title>' +
        '<rect width="' + NODE_W + '" height="' + NODE_H + '" rx="5"></rect>' +
        '<text x="8" y="15" class="t">' + esc(l.type) + (o.uncertain ? ' ?' : '') + '</text>' +
        '<text x="8" y="29" class="n">' + esc(name) + '</text></g>';
    }
    width = Math.max(width, 16 + widest * (NODE_W + GAP_X));
    top += rows.length * (NODE_H + GAP_Y) + 16;
  }
  return '<svg xmlns="http://www.w3.org/2000/svg" width="' + width + '" height="' + top + '" role="img" aria-label="the graph: ' +
    n + ' ops coloured by unit">' + '<path class="edges" d="' + edges.join('') + '"></path>' + h + '</svg>';
}

function unitText(o) {
  const u = { ane: 'ANE', gpu: 'GPU', cpu: 'CPU', gpu_or_cpu: 'GPU or CPU', unknown: 'unknown unit' }[o.unit] || o.unit;
  return u + (o.uncertain ? ' (uncertain)' : '');
}

// The op list draws only the rows in view (OP_ROW_PX each): a model of 10,000 ops
// would otherwise cost seconds of layout. Each row is an option with its position in
// the set (aria-posinset / aria-setsize); the selected one is always drawn.
const OP_ROW_PX = 22;
function opRow(i) {
  const o = page.ops[i];
  return '<li role="option" id="op-' + i + '" data-op="' + i + '" aria-selected="' + (i === page.sel) +
    '" aria-posinset="' + (i + 1) + '" aria-setsize="' + page.ops.length + '" style="top:' + i * OP_ROW_PX + 'px">' +
    '<span class="badge u-' + esc(o.unit) + (o.uncertain ? ' uncertain' : '') + '">' + esc(unitText(o)) + '</span> ' +
    esc(o.layer.name) + ' <small>' + esc(o.layer.type) + '</small></li>';
}

function drawOpRows() {
  const ops = page.ops || [];
  const list = document.getElementById('oplist');
  const first = Math.max(0, Math.floor(list.scrollTop / OP_ROW_PX) - 10);
  const last = Math.min(ops.length, first + Math.ceil((list.clientHeight || 600) / OP_ROW_PX) + 20);
  let h = '<li class="sizer" role="none" aria-hidden="true" style="top:' + ops.length * OP_ROW_PX + 'px"></li>';
  for (let i = first; i < last; i++) h += opRow(i);
  if (page.sel >= 0 && (page.sel < first || page.sel >= last)) h += opRow(page.sel);
  list.innerHTML = h;
}

function showGraph() {
  const ops = page.ops || [];
  page.sel = ops.length ? 0 : -1;
  document.getElementById('oplist').scrollTop = 0;
  drawOpRows();
  document.getElementById('graph').innerHTML = ops.length ? graphSvg(ops) : '<p>no ops</p>';
  document.getElementById('graph-note').textContent = ops.length > GRAPH_MAX_OPS
    ? 'the graph shows the first ' + GRAPH_MAX_OPS + ' of ' + ops.length + ' ops; the list has them all' : '';
  closeDetail(false);
  if (ops.length) selectOp(0, false);
}

function selectOp(i, scroll) {
  const ops = page.ops || [];
  if (!ops.length) return;
  i = Math.max(0, Math.min(ops.length - 1, i));
  const list = document.getElementById('oplist');
  const prevNode = document.getElementById('node-' + page.sel);
  if (prevNode) prevNode.classList.remove('sel');
  page.sel = i;
  if (scroll) {
    const top = i * OP_ROW_PX, view = list.clientHeight;
    if (top < list.scrollTop) list.scrollTop = top;
    else if (top + OP_ROW_PX > list.scrollTop + view) list.scrollTop = top + OP_ROW_PX - view;
  }
  drawOpRows();
  list.setAttribute('aria-activedescendant', 'op-' + i);
  const node = document.getElementById('node-' + i);
  if (node) node.classList.add('sel');
  if (scroll && node) node.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  if (!document.getElementById('detail').classList.contains('hidden')) fillDetail(i);
}

function fillDetail(i) {
  const o = page.ops[i], l = o.layer;
  document.getElementById('detail-title').textContent = l.name + ' (' + l.type + ')';
  const rows = [];
  const add = (k, v) => { if (v !== undefined && v !== null && v !== '') rows.push('<dt>' + k + '</dt><dd>' + v + '</dd>'); };
  add('runs on', '<b class="u-' + esc(o.unit) + '">' + esc(unitText(o)) + '</b>' +
    (l.op_unit && l.op_unit !== l.unit && l.op_unit !== 'none' ? ' (its own verdict: ' + esc(l.op_unit) + ')' : ''));
  add('verdict', esc(l.verdict || '') + (l.p_ane !== undefined ? ', p(ANE) ' + esc(l.p_ane) : ''));
  add('confidence', esc({ A: 'A: documented by Apple', M: 'M: measured by a named third party', G: 'G: a guess' }[l.confidence] || l.confidence || ''));
  if (l.uncertain) add('uncertain', esc(l.uncertain));
  if (l.moved_by) add('moved by', esc(l.moved_by) + ruleLine(l.moved_by));
  add('reason', esc(l.reason || ''));
  for (const f of l.findings || []) {
    const r = page.rules && page.rules[f.rule];
    let ev = '';
    if (r) {
      ev = esc(r.title) + '<br>evidence: ' + esc(r.provenance || '') +
        (r.evidence ? '<br>seen on ' + esc(r.evidence.families || '') + ' / ' + esc(r.evidence.releases || '') +
          ', ' + esc(r.evidence.reports) + ' report' + (r.evidence.reports === 1 ? '' : 's') +
          (r.evidence.mechanism ? '<br>why: ' + esc(r.evidence.mechanism) : '') : '') +
        (r.url ? '<br>source: <code>' + esc(r.url) + '</code>' : '');
    }
    add('rule ' + esc(f.rule), esc(f.kind || '') + ', confidence ' + esc(f.confidence || '') + ': ' + esc(f.reason || '') +
      (f.suppressed ? ' (accepted: ' + esc(f.suppressed.reason || f.suppressed.kind) + ')' : '') + (ev ? '<br>' + ev : ''));
  }
  if (!(l.findings || []).length) add('rules', 'none fired' + (l.unit === 'ane' ? ': no known rule keeps it off the ANE' : ''));
  if (page.fns > 1) add('function', esc(o.fn));
  if (l.block && l.depth) add('block', esc(l.block));
  add('reads', esc((l.inputs || []).join(', ')));
  add('writes', esc((l.outputs || []).join(', ')));
  add('where', esc(l.path || '') + (l.offset !== undefined ? ' (byte ' + esc(l.offset) + ')' : ''));
  document.querySelector('#detail dl').innerHTML = rows.join('');
}

function ruleLine(id) {
  const r = page.rules && page.rules[id];
  return r ? ': ' + esc(r.title) : '';
}

function openDetail(i) {
  const box = document.getElementById('detail');
  fillDetail(i);
  box.classList.remove('hidden');
  box.focus();
}

function closeDetail(refocus) {
  const box = document.getElementById('detail');
  if (box.classList.contains('hidden')) return;
  box.classList.add('hidden');
  if (refocus) document.getElementById('oplist').focus();
}

function opListKey(e) {
  const step = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 }[e.key];
  if (step) selectOp(page.sel + step, true);
  else if (e.key === 'Home') selectOp(0, true);
  else if (e.key === 'End') selectOp((page.ops || []).length - 1, true);
  else if (e.key === 'Enter' || e.key === ' ') openDetail(page.sel);
  else if (e.key === 'Escape') closeDetail(true);
  else return;
  e.preventDefault();
}

const TABS = { graph: 'graph-wrap', layers: 'layers', plan: 'plan', fix: 'fix-wrap', report: 'report-wrap' };
page.tab = 'graph';
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
  page.ops = buildOps(d);
  page.fns = new Set(page.ops.map((o) => o.group)).size;
  showGraph();
  page.fixed = null;
  document.getElementById('fix-download').disabled = true;
  document.getElementById('fix-out').textContent = '';
  showFixCommand();
  document.getElementById('cli').innerHTML = 'same as <code>' + esc(['anelint'].concat(checkArgs('json')).join(' ')) + '</code>';
  document.getElementById('result').classList.remove('hidden');
  document.getElementById('rerun').disabled = false;
  const err = firstLine(r.stderr);
  setStatus('checked ' + page.root + ' in ' + r.ms.toFixed(0) + ' ms' + (err ? ' (' + err + ')' : ''), false);
  window.anelintLast = { status: r.status, json: r.output, stderr: r.stderr, ms: r.ms, memory: r.memory };
  if (page.tab === 'plan' || page.tab === 'report') selectTab(page.tab);
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

// ---------------------------------------------------------------- fix in the page
// `anelint fix` on the model, its passes and their proof (the reference interpreter)
// run in the worker as on the command line; the rewritten model is built in the
// worker's memory, so the page takes models up to FIX_LIMIT_BYTES (the files'
// total) and offers the output as a download: a .mlmodel as it is, an .mlpackage
// as a .zip of its folder. The messages (a refusal, exit 1) are the CLI's own.
const FIX_LIMIT_BYTES = 256 << 20;

// fix takes one chip, one release: the page's "every chip / release" leaves the
// CLI's default
function fixArgs(outName) {
  const a = ['fix'];
  const t = document.getElementById('target').value;
  const os = document.getElementById('os').value;
  const cu = document.getElementById('units').value;
  const allow = document.getElementById('allow').value;
  if (t && t !== 'all') a.push('--target', t);
  if (os && os !== 'all') a.push('--os', os);
  if (cu && cu !== 'all') a.push('--compute-units', cu);
  const proof = document.getElementById('proof').value;
  if (allow) a.push('--allow', allow);
  if (proof) a.push('--proof', proof);
  return a.concat(['-o', outName, page.root]);
}

// the output beside the model: NAME.fixed.mlmodel / NAME.fixed.mlpackage
function fixOutName() {
  const parts = page.root.split('/');
  const base = parts.pop();
  const m = /^(.*?)(\.(mlmodel|mlpackage|mlmodelc))?$/i.exec(base);
  return parts.concat([m[1] + '.fixed' + (m[2] || '')]).join('/');
}

function showFixCommand() {
  const out = page.root ? fixOutName() : 'OUT';
  document.getElementById('fix-cli').innerHTML = 'same as <code>' +
    esc(['anelint'].concat(fixArgs(out.split('/').pop())).join(' ')) + '</code>';
}

async function fixModel() {
  const bytes = page.files.reduce((n, f) => n + f.file.size, 0);
  const out = document.getElementById('fix-out');
  const save = document.getElementById('fix-download');
  save.disabled = true;
  page.fixed = null;
  if (bytes > FIX_LIMIT_BYTES) {
    const msg = 'fix in the page takes models up to ' + (FIX_LIMIT_BYTES >> 20) + ' MB (this one is ' +
      (bytes / 1048576).toFixed(0) + ' MB): run the command below';
    out.textContent = msg;
    window.anelintFixLast = { status: -1, stdout: '', stderr: msg };
    return window.anelintFixLast;
  }
  const name = fixOutName();
  out.textContent = 'fixing ' + page.root + '…';
  const r = await call(fixArgs(name), page.files, { memory: true, collect: name });
  // the CLI's text: its errors (stderr) then its report (stdout)
  out.textContent = (r.stderr || '') + (r.stdout || '');
  if (r.status === 0 && r.download) {
    page.fixed = { name: r.downloadName, bytes: r.download };
    save.disabled = false;
    save.textContent = 'download ' + r.downloadName + ' (' + (r.download.length / 1048576).toFixed(1) + ' MB)';
  }
  window.anelintFixLast = { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: r.ms, memory: r.memory,
    name: r.downloadName || null, size: r.download ? r.download.length : 0 };
  return window.anelintFixLast;
}

function saveFixed() {
  if (!page.fixed) return;
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([page.fixed.bytes], { type: 'application/octet-stream' }));
  a.download = page.fixed.name;
  document.body.appendChild(a);
  a.click();
  a.remove();
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
  const list = document.getElementById('oplist');
  list.addEventListener('keydown', opListKey);
  let drawing = false;
  list.addEventListener('scroll', () => {
    if (drawing) return;
    drawing = true;
    requestAnimationFrame(() => { drawing = false; drawOpRows(); });
  });
  list.addEventListener('click', (e) => {
    const li = e.target.closest('li[data-op]');
    if (li) { selectOp(+li.dataset.op, false); openDetail(+li.dataset.op); }
  });
  document.getElementById('graph').addEventListener('click', (e) => {
    const g = e.target.closest('g[data-op]');
    if (g) { selectOp(+g.dataset.op, true); openDetail(+g.dataset.op); }
  });
  document.getElementById('detail').addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { closeDetail(true); e.preventDefault(); }
  });
  document.getElementById('detail-close').addEventListener('click', () => closeDetail(true));
  document.getElementById('fix-run').addEventListener('click', () => { if (page.root) fixModel(); });
  document.getElementById('fix-download').addEventListener('click', saveFixed);
  for (const id of ['target', 'os', 'units', 'allow', 'proof']) document.getElementById(id).addEventListener('change', () => { if (page.root) showFixCommand(); });
  window.anelintFix = fixModel;
  // the test drives this (tests/web.py): the JSON text of a check, exactly
  window.anelintCheck = async (files) => { await load(files); return window.anelintLast; };
  try {
    page.worker = startWorker();
    await fillOptions();
    // the rule catalog (`anelint rules -f json`): each op's rule, its evidence and source
    const rr = await call(['rules', '-f', 'json'], []);
    page.rules = {};
    try { for (const r of JSON.parse(rr.stdout).rules) page.rules[r.id] = r; } catch (e) { /* details without the catalog */ }
    setStatus('Ready: drop a model, or pick one.');
    window.anelintReady = true;
  } catch (e) {
    setStatus('the analyser did not start: ' + (e.message || e), true);
  }
});
