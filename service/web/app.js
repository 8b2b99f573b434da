// service/web/app.js — the matrix page: loads a flavor's matrix from /v1/matrix, draws one row per
// key and one column per target (grouped by family), filters rows as you type, shows a cell's evidence and
// lowered_to on click (/v1/cells, /v1/history), and the diff of two flavors (/v1/diff). A filter that names an
// llvm.amdgcn.* intrinsic (prefix and types optional) also shows the census's answer for it on every processor,
// weighed over its instantiations (/v1/intrinsics); any spelling of a name (a builtin, an instruction, a key) is
// looked up in /v1/search: its hits are listed, the keys it names exactly shown as rows, the intrinsic it leads to
// answered as above. Served by `archdb site` as a static site, it reads the same documents from files beside it
// (siteApi). Plain browser JavaScript, no build step, no third-party code. The view is kept in the URL's #fragment, so it can be
// linked: #flavor=llvm22&q=mfma, #view=diff&from=llvm22&to=llvm23.
'use strict';

(() => {
  // Status, short label in a cell, meaning. Answers first; the last three are non-answers.
  const STATUSES = [
    ['ok', 'ok', 'lowers: codegen and the MC assembler produced an object'],
    ['arch_absent', 'no', 'the name exists; this target cannot lower it'],
    ['name_absent', '—', 'this LLVM has no intrinsic of that name'],
    ['signature_mismatch', 'sig', 'the declared types are not the intrinsic\'s signature'],
    ['target_unsupported', '?', 'no answer: this LLVM does not know the processor'],
    ['toolchain_crash', 'crash', 'no answer: asking crashed LLVM'],
    ['toolchain_timeout', 't/o', 'no answer: LLVM did not finish in time'],
  ];
  const LABEL = Object.fromEntries(STATUSES.map(([s, l]) => [s, l]));
  const MEANING = Object.fromEntries(STATUSES.map(([s, , m]) => [s, m]));
  const NON_ANSWERS = new Set(['target_unsupported', 'toolchain_crash', 'toolchain_timeout']);

  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('data-')) e.setAttribute(k, v);
      else if (k in e) e[k] = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  };

  const state = {
    view: 'matrix', flavor: '', q: '', group: true, statuses: new Set(), hiddenFamilies: new Set(),
    from: '', to: '', cell: null,  // cell: { key, target } whose evidence is open
    churn: false,  // the diff lists lowering churn too
  };
  let buildFlavor = '';  // the flavor the service's own build measures: the default
  // What the page was served with (index.html's data block): the documents of /v1/flavors and of the build
  // flavor's /v1/matrix, drawn before any request is made.
  let initial = null;
  try { initial = $('initial') ? JSON.parse($('initial').textContent) : null; } catch (e) { initial = null; }
  let flavors = [];     // /v1/flavors
  let matrix = null;    // /v1/matrix for state.flavor
  let diff = null;      // /v1/diff for state.from, state.to
  let selectedCell = null;

  // A static site (`archdb site`): the service's documents are files beside the page (service/site.h), read
  // once each; a search runs over the site's list of names, ranked as the service ranks (db/search.h).
  const site = Boolean(initial && initial.site);
  const files = new Map();
  function siteFile(rel) {
    if (!files.has(rel)) {
      files.set(rel, fetch(rel).then(async (r) => {
        if (!r.ok) throw new Error(`${rel}: ${r.status} ${r.statusText}`);
        return r.json();
      }));
    }
    return files.get(rel);
  }
  const fullIntrinsic = (name) => (name.startsWith('llvm.') ? name : `llvm.amdgcn.${name}`);
  function normalizeName(text) {
    let s = text.replace(/\s/g, '').toLowerCase();
    for (const prefix of ['__builtin_amdgcn_', 'llvm.amdgcn.', 'amdgcn.', 'llvm.']) {
      if (s.startsWith(prefix)) { s = s.slice(prefix.length); break; }
    }
    return s.replace(/_/g, '.');
  }
  const KIND_ORDER = ['key', 'intrinsic', 'builtin', 'mnemonic'];
  const MATCH_ORDER = ['exact', 'instantiation', 'prefix', 'word', 'substring'];
  // "wmma.f32.16x16x16.f16.v8f32.v16f16" of "wmma.f32.16x16x16.f16": each further segment an overload type.
  function isInstantiationOf(q, base) {
    if (q.length <= base.length || !q.startsWith(base) || q[base.length] !== '.') return false;
    return q.slice(base.length + 1).split('.').every((seg) => /^(v[0-9]+)?((i|f|bf)[0-9]+|p[0-9]+)$/.test(seg));
  }
  async function siteSearch(text, limit) {
    const q = normalizeName(text);
    const hits = [];
    for (const e of await siteFile('v1/names.json')) {
      let match = null;
      if (e.n === q) match = 'exact';
      else if ((e.kind === 'intrinsic' || e.kind === 'key') && isInstantiationOf(q, e.n)) match = 'instantiation';
      else if (e.n.startsWith(q)) match = 'prefix';
      else if (e.n.includes(q)) {
        let word = false;
        for (let at = e.n.indexOf(q); at !== -1 && !word; at = e.n.indexOf(q, at + 1)) word = e.n[at - 1] === '.';
        match = word ? 'word' : 'substring';
      }
      if (match) hits.push({ name: e.name, kind: e.kind, match, means: e.means });
    }
    const rank = (h) => [MATCH_ORDER.indexOf(h.match), KIND_ORDER.indexOf(h.kind), h.name.length];
    hits.sort((a, b) => {
      const [ra, rb] = [rank(a), rank(b)];
      for (let i = 0; i < ra.length; ++i) if (ra[i] !== rb[i]) return ra[i] - rb[i];
      return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    });
    return { query: text, total: hits.length, hits: hits.slice(0, limit) };
  }
  // The service's path, answered from the site's files.
  async function siteApi(path) {
    const url = new URL(path, 'http://site');
    const seg = url.pathname.split('/').slice(2).map(decodeURIComponent);
    const q = url.searchParams;
    switch (seg[0]) {
      case 'flavors': return siteFile('v1/flavors.json');
      case 'matrix': return siteFile(`v1/matrix/${q.get('flavor')}.json`);
      case 'history': return siteFile(`v1/history/${seg[1]}.json`);
      case 'diff': return siteFile(`v1/diff/${seg[1]}/${seg[2]}.json`);
      case 'search': return siteSearch(q.get('q') || '', Number(q.get('limit') || 20));
      case 'cells': {
        const all = await siteFile(`v1/cells/${seg[2]}.json`);
        const cell = all[seg[1]] && all[seg[1]][seg[3]];
        if (!cell) throw new Error(`no cell for ${seg[2]} on ${seg[3]} in ${seg[1]}`);
        return cell;
      }
      case 'intrinsics': {  // the census history holds every census's answers (GET /v1/history/NAME?source=census)
        const name = fullIntrinsic(seg[2]);
        if (!(await siteFile('v1/intrinsics.json')).includes(name)) throw new Error(`${name} has no page in this site`);
        const h = await siteFile(`v1/history/${name}.json`);
        const flavor = (h.flavors || []).find((f) => f.name === seg[1]);
        if (h.source !== 'census' || !flavor) throw new Error(`${name} is not in ${seg[1]}'s census`);
        const answers = {};
        for (const [target, row] of Object.entries(h.targets)) if (row.cells[seg[1]]) answers[target] = row.cells[seg[1]];
        return { flavor: seg[1], intrinsic: name, instantiations: flavor.instantiations, answers };
      }
      default: throw new Error(`${path}: not part of this site`);
    }
  }

  async function api(path) {
    if (site) return siteApi(path);
    const response = await fetch(path, { headers: { Accept: 'application/json' } });
    let body = null;
    try { body = await response.json(); } catch (e) { /* not JSON */ }
    if (!response.ok) throw new Error(body && body.message ? body.message : `${response.status} ${response.statusText}`);
    return body;
  }
  const enc = encodeURIComponent;

  function say(text, isError = false) {
    const m = $('message');
    m.textContent = text;
    m.classList.toggle('error', isError);
  }

  // --- the URL fragment ---------------------------------------------------------------------------------
  function readHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ''));
    state.view = p.get('view') === 'diff' ? 'diff' : 'matrix';
    state.flavor = p.get('flavor') || state.flavor;
    state.q = p.get('q') || '';
    state.group = p.get('group') !== '0';
    state.statuses = new Set((p.get('status') || '').split(',').filter((s) => LABEL[s]));
    state.hiddenFamilies = new Set((p.get('hide') || '').split(',').filter(Boolean));
    state.from = p.get('from') || state.from;
    state.to = p.get('to') || state.to;
    state.churn = p.get('churn') === '1';
    state.cell = p.get('cell') && p.get('target') ? { key: p.get('cell'), target: p.get('target') } : null;
  }
  function writeHash() {
    const p = new URLSearchParams();
    if (state.view === 'diff') {
      p.set('view', 'diff');
      if (state.from) p.set('from', state.from);
      if (state.to) p.set('to', state.to);
      if (state.churn) p.set('churn', '1');
    } else if (state.flavor) {
      p.set('flavor', state.flavor);
      if (state.cell) { p.set('cell', state.cell.key); p.set('target', state.cell.target); }
    }
    if (state.q) p.set('q', state.q);
    if (!state.group) p.set('group', '0');
    if (state.statuses.size) p.set('status', [...state.statuses].join(','));
    if (state.hiddenFamilies.size) p.set('hide', [...state.hiddenFamilies].join(','));
    const text = p.toString();
    if (location.hash.replace(/^#/, '') !== text) history.replaceState(null, '', text ? `#${text}` : location.pathname);
  }

  // --- filtering --------------------------------------------------------------------------------------------
  function terms() { return state.q.toLowerCase().split(/\s+/).filter(Boolean); }
  function textMatches(...fields) {
    const t = terms();
    if (!t.length) return true;
    const hay = fields.join(' ').toLowerCase();
    return t.every((x) => hay.includes(x));
  }

  // --- flavors ----------------------------------------------------------------------------------------------
  function fillFlavorSelect(select, value) {
    select.replaceChildren();
    for (const f of flavors) {
      const measured = f.cells > 0;
      let label = f.name;
      if (f.origin === 'imported') label += ' (imported)';
      if (f.origin === 'descriptor') label += ' (descriptor: not measured here)';
      else if (f.provenance && f.provenance.toolchain && f.provenance.toolchain.prerelease) label += ' (pre-release)';
      select.append(el('option', { value: f.name, text: label, disabled: !measured, selected: f.name === value }));
    }
  }
  function defaultFlavor() {
    const usable = flavors.filter((f) => f.cells > 0 && f.origin === 'measured');
    if (usable.some((f) => f.name === buildFlavor)) return buildFlavor;
    const released = usable.filter((f) => !(f.provenance && f.provenance.toolchain && f.provenance.toolchain.prerelease));
    const pick = released.length ? released : usable.length ? usable : flavors.filter((f) => f.cells > 0);
    return pick.length ? pick[pick.length - 1].name : '';
  }
  function showProvenance(f) {
    if (!f) { $('provenance').textContent = ''; return; }
    const p = f.provenance || {};
    const tc = p.toolchain || {};
    const parts = [`${f.name}: ${f.origin}`];
    if (tc.identity) parts.push(tc.identity);
    if (tc.package) parts.push(`package ${tc.package}`);
    if (tc.prerelease) parts.push('pre-release');
    if (p.probe) parts.push(`probe ${p.probe.opt_level || ''} ${p.probe.triple || ''}`.trim());
    parts.push(`${f.keys} keys × ${f.targets.length} targets`);
    if (f.run) parts.push(`measured here in run ${f.run.id} (${f.run.ended_at || f.run.started_at})`);
    $('provenance').textContent = parts.join(' · ');
  }

  // --- the matrix -------------------------------------------------------------------------------------------
  // A target as people say it: a processor, or a processor run with other features ("gfx1100 w64" for
  // gfx1100:+wavefrontsize64,-wavefrontsize32); the full target is the header's title.
  function processorOf(target) { return target.split(':')[0]; }
  function targetLabel(target) {
    const [processor, features] = target.split(':');
    if (!features) return target;
    return /\+wavefrontsize64/.test(features) ? `${processor} w64` : `${processor} ${features}`;
  }
  function columns() {
    const targets = matrix.targets.filter((t) => !state.hiddenFamilies.has(familyOf(t)));
    if (!state.group) return targets;
    const order = [];
    const members = new Map();
    for (const t of targets) {
      const f = familyOf(t);
      if (!members.has(f)) { members.set(f, []); order.push(f); }
      members.get(f).push(t);
    }
    // Within a family, a processor's featured targets follow it.
    const rank = (t) => { const i = matrix.targets.indexOf(processorOf(t)); return i < 0 ? matrix.targets.indexOf(t) : i; };
    for (const list of members.values()) list.sort((a, b) => rank(a) - rank(b) || (a.includes(':') - b.includes(':')));
    return order.flatMap((f) => members.get(f));
  }
  function familyOf(target) {
    for (const fam of matrix.families) if (fam.targets.includes(target)) return fam.name;
    return target;
  }

  function renderFamilies() {
    const box = $('families');
    box.replaceChildren();
    if (!matrix) return;
    for (const fam of matrix.families) {
      const input = el('input', { type: 'checkbox', checked: !state.hiddenFamilies.has(fam.name), 'data-family': fam.name });
      input.addEventListener('change', () => {
        if (input.checked) state.hiddenFamilies.delete(fam.name); else state.hiddenFamilies.add(fam.name);
        writeHash();
        renderMatrix();
      });
      box.append(el('label', { title: fam.targets.join(', ') }, input, fam.name));
    }
  }

  function renderLegend(counts) {
    const box = $('legend');
    box.replaceChildren();
    for (const [status, label] of STATUSES) {
      const chip = el('button', {
        type: 'button', class: `chip s-${status}`, 'data-status': status,
        title: `${status}: ${MEANING[status]} (click: only rows with it)`,
        'aria-pressed': state.statuses.has(status) ? 'true' : 'false',
      }, status, el('span', { class: 'n', text: counts ? String(counts[status] || 0) : '' }));
      chip.addEventListener('click', () => {
        if (state.statuses.has(status)) state.statuses.delete(status); else state.statuses.add(status);
        chip.setAttribute('aria-pressed', state.statuses.has(status) ? 'true' : 'false');
        writeHash();
        if (state.view === 'matrix') applyMatrixFilter(); else renderDiff();
      });
      box.append(chip);
    }
  }

  function renderMatrix() {
    const table = $('matrix');
    table.replaceChildren();
    if (!matrix) return;
    table.dataset.flavor = matrix.flavor;  // which flavor is drawn: a link to another redraws it
    const cols = columns();
    const thead = el('thead');
    if (state.group) {
      const fr = el('tr', { class: 'family-row' }, el('th', { class: 'key' }));
      let last = null;
      for (const t of cols) {
        const f = familyOf(t);
        if (f === last) { fr.lastChild.colSpan += 1; continue; }
        fr.append(el('th', { class: 'family family-start', colSpan: 1, text: f, 'data-family': f }));
        last = f;
      }
      thead.append(fr);
    }
    const nr = el('tr', { class: 'names' }, el('th', { class: 'key', text: `key (${matrix.flavor})` }));
    let lastFamily = null;
    for (const t of cols) {
      const f = familyOf(t);
      nr.append(el('th', { class: state.group && f !== lastFamily ? 'family-start' : '', title: t, scope: 'col',
        'data-target': t }, el('span', { class: 'vlabel', text: targetLabel(t) })));
      lastFamily = f;
    }
    thead.append(nr);
    table.append(thead);

    const index = new Map(matrix.targets.map((t, i) => [t, i]));
    const tbody = el('tbody');
    for (const row of matrix.rows) {
      const tr = el('tr', { 'data-key': row.key, 'data-intrinsic': row.intrinsic });
      tr.append(el('th', { class: 'key', scope: 'row', text: row.key, title: row.intrinsic }));
      lastFamily = null;
      for (const t of cols) {
        const status = row.statuses[index.get(t)];
        const f = familyOf(t);
        const start = state.group && f !== lastFamily ? ' family-start' : '';
        lastFamily = f;
        if (!status) {
          tr.append(el('td', { class: `cell missing${start}`, text: '·', title: `${row.key} on ${t}: no cell` }));
          continue;
        }
        tr.append(el('td', {
          class: `cell s-${status}${start}`, text: LABEL[status] || status, tabIndex: 0,
          'data-key': row.key, 'data-target': t, 'data-status': status,
          title: `${row.key} on ${t}: ${status}${NON_ANSWERS.has(status) ? ' (no answer)' : ''}`,
        }));
      }
      tbody.append(tr);
    }
    table.append(tbody);
    // Sticky second header row sits below the first.
    const first = thead.querySelector('tr.family-row');
    table.style.setProperty('--names-top', first ? `${first.getBoundingClientRect().height}px` : '0px');
    applyMatrixFilter();
  }

  function applyMatrixFilter() {
    if (!matrix) return;
    const rows = $('matrix').querySelectorAll('tbody tr');
    let shown = 0;
    const counts = {};
    for (const tr of rows) {
      let visible = textMatches(tr.dataset.key, tr.dataset.intrinsic) || found.keys.has(tr.dataset.key);
      const cells = tr.querySelectorAll('td.cell[data-status]');
      if (visible && state.statuses.size) visible = [...cells].some((td) => state.statuses.has(td.dataset.status));
      tr.classList.toggle('hidden', !visible);
      if (!visible) continue;
      shown += 1;
      for (const td of cells) counts[td.dataset.status] = (counts[td.dataset.status] || 0) + 1;
    }
    renderLegend(counts);
    const total = matrix.rows.length;
    say(shown === total ? `${total} keys` : `${shown} of ${total} keys match`);
    $('matrix').dataset.shown = String(shown);
    showIntrinsic();
  }

  // --- any spelling in the filter: what /v1/search says it names (a builtin, a mnemonic, llvm.amdgcn.x) ---------
  // `keys`: the rows a name stands for exactly; `intrinsic`: the intrinsic it names or leads to.
  let found = { term: '', keys: new Set(), intrinsic: '' };
  let searchAsked = 0;
  async function searchFilter() {
    const t = terms();
    const ask = ++searchAsked;
    if (t.length !== 1) { found = { term: '', keys: new Set(), intrinsic: '' }; return; }
    let res;
    try {
      res = await api(`/v1/search?q=${enc(t[0])}&limit=12`);
    } catch (e) {
      return;
    }
    if (ask !== searchAsked) return;
    const exact = res.hits.filter((h) => h.match === 'exact' || h.match === 'instantiation');
    const keys = new Set();
    let intrinsic = '';
    for (const h of exact) {
      if (h.kind === 'key') keys.add(h.name);
      if (h.kind === 'intrinsic' && !intrinsic) intrinsic = h.name;
      for (const m of h.means) {
        if (matrix && matrix.rows.some((r) => r.key === m)) keys.add(m);
        else if (!intrinsic && m.startsWith('llvm.amdgcn.')) intrinsic = m;
      }
    }
    found = { term: t[0], keys, intrinsic };
    const list = $('names');
    list.replaceChildren(...res.hits.map((h) => el('li', { 'data-kind': h.kind, 'data-name': h.name },
      el('span', { class: 'kind', text: h.kind }), ' ', el('code', { text: h.name }),
      h.means.length ? el('span', { class: 'via', text: ` → ${h.means.slice(0, 3).join(', ')}` }) : null)));
    list.hidden = res.hits.length === 0;
    applyMatrixFilter();
  }

  // --- an intrinsic named in the filter: the census's answer per processor ------------------------------------
  let intrinsicAsked = 0;  // the latest question: an older answer arriving late is dropped
  async function showIntrinsic() {
    const box = $('intrinsic');
    const t = terms();
    const ask = ++intrinsicAsked;
    const name = t.length === 1 && found.term === t[0] && found.intrinsic ? found.intrinsic : t[0];
    if (state.view !== 'matrix' || !state.flavor || t.length !== 1 || !/^[a-z0-9_.]+\.[a-z0-9_.]+$/.test(name)) {
      box.hidden = true;
      return;
    }
    let answer;
    try {
      answer = await api(`/v1/intrinsics/${enc(state.flavor)}/${enc(name)}`);
    } catch (e) {
      if (ask === intrinsicAsked) box.hidden = true;  // not an intrinsic of this census: the rows say enough
      return;
    }
    if (ask !== intrinsicAsked) return;
    // One line per (answer, instantiation that decided it), its processors listed.
    const lines = new Map();
    for (const [processor, a] of Object.entries(answer.answers)) {
      const via = a.status === 'ok' ? a.instantiation : '';
      const id = `${a.status}\t${via}`;
      if (!lines.has(id)) lines.set(id, { status: a.status, via, evidence: a.evidence || '', processors: [] });
      lines.get(id).processors.push(processor);
    }
    const order = (s) => (s === 'ok' ? 0 : NON_ANSWERS.has(s) ? 2 : 1);
    const list = el('ul', { class: 'answers' });
    for (const line of [...lines.values()].sort((a, b) => order(a.status) - order(b.status))) {
      list.append(el('li', { 'data-status': line.status, 'data-processors': line.processors.join(',') },
        badge(line.status), ' ', el('span', { class: 'processors', text: line.processors.join(', ') }),
        line.via ? el('span', { class: 'via', text: ` as ${line.via}` }) : null,
        !line.via && line.evidence ? el('span', { class: 'via', text: ` — ${line.evidence}` }) : null));
    }
    box.replaceChildren(
      el('h2', {}, `${answer.intrinsic} in the ${answer.flavor} census`,
        site ? el('a', { class: 'page-link', href: `intrinsics/${answer.intrinsic}.html`, text: ' — every census, every processor' }) : null),
      el('p', { class: 'note', text: `ok where any of its ${answer.instantiations.length} measured instantiation(s) ` +
        'lowers; refused only where every one is: ' + answer.instantiations.join(', ') }),
      list);
    box.hidden = false;
  }

  async function loadMatrix() {
    if (!state.flavor) { say('the database has no measured column', true); return; }
    say(`loading ${state.flavor}…`);
    try {
      if (initial && initial.matrix && initial.matrix.flavor === state.flavor) {
        matrix = initial.matrix;  // once: a later load asks the service, which may have a newer snapshot
        initial.matrix = null;
      } else {
        matrix = await api(`/v1/matrix?flavor=${enc(state.flavor)}`);
      }
    } catch (e) {
      matrix = null;
      $('matrix').replaceChildren();
      say(e.message, true);
      return;
    }
    showProvenance(flavors.find((f) => f.name === state.flavor));
    renderFamilies();
    renderMatrix();
    searchFilter();
    if (state.cell) {  // a link to one cell's evidence
      const { key, target } = state.cell;
      const td = [...$('matrix').querySelectorAll('td.cell[data-status]')]
        .find((x) => x.dataset.key === key && x.dataset.target === target);
      showCell(matrix.flavor, key, target, td);
    }
    if (matrix.note) say(matrix.note);
  }

  // --- one cell's evidence ------------------------------------------------------------------------------------
  function badge(status) {
    return el('span', { class: `badge s-${status}`, text: status, title: MEANING[status] || '' });
  }

  async function showCell(flavor, key, target, td) {
    state.cell = { key, target };
    writeHash();
    if (selectedCell) selectedCell.classList.remove('selected');
    selectedCell = td || null;
    if (selectedCell) selectedCell.classList.add('selected');
    const panel = $('detail');
    const body = $('detail-body');
    panel.hidden = false;
    document.body.classList.add('detail-open');  // the matrix makes room for it rather than lie under it
    if (selectedCell) selectedCell.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    body.replaceChildren(el('p', { text: 'loading…' }));
    let cell;
    let hist = null;
    try {
      [cell, hist] = await Promise.all([
        api(`/v1/cells/${enc(flavor)}/${enc(key)}/${enc(target)}`),
        api(`/v1/history/${enc(key)}?targets=${enc(target)}`).catch(() => null),
      ]);
    } catch (e) {
      body.replaceChildren(el('p', { class: 'message error', text: e.message }));
      return;
    }
    const dl = el('dl');
    const row = (name, value) => { if (value !== undefined && value !== null && value !== '') dl.append(el('dt', { text: name }), el('dd', {}, value)); };
    row('status', el('span', {}, badge(cell.status), ' ', MEANING[cell.status] || ''));
    row('flavor', `${cell.flavor} (${cell.origin})`);
    row('target', cell.target);
    row('intrinsic', el('code', { text: cell.intrinsic }));
    if (cell.lowered_to) {
      row('lowered to', cell.lowered_to.length ? el('pre', { class: 'lowered', text: cell.lowered_to.join('\n') })
        : el('span', { text: '(no instruction)' }));
    }
    if (cell.evidence) row('evidence', el('pre', { class: 'evidence', text: cell.evidence }));
    if (cell.imm !== undefined) row('immediate', String(cell.imm));
    if (cell.posing) row('posed with', cell.posing);
    if (cell.mc_check) row('MC check', el('pre', { text: cell.mc_check }));
    if (cell.note) row('note', cell.note);
    const link = site ? `v1/cells/${key}.json` : `/v1/cells/${enc(flavor)}/${enc(key)}/${enc(target)}`;
    row('JSON', el('a', { href: link, text: link }));
    if (site) row('page', el('a', { href: `keys/${key}.html`, text: `every flavor and target of ${key}` }));
    const parts = [el('h2', { text: `${key} · ${targetLabel(target)}` }), dl];
    if (hist && hist.targets && hist.targets[target]) {
      const h = hist.targets[target];
      const table = el('table', {}, el('tr', {}, el('th', { text: 'flavor' }), el('th', { text: 'status' })));
      for (const f of hist.flavors) {
        const c = h.cells[f.name];
        table.append(el('tr', {}, el('td', { text: f.name + (f.origin === 'imported' ? ' (imported)' : '') }),
          el('td', {}, c ? badge(c.status) : '—')));
      }
      parts.push(el('h3', { text: 'history' }), el('p', { class: 'summary', text: h.summary }), table);
    }
    body.replaceChildren(...parts);
  }

  // --- the diff of two flavors ------------------------------------------------------------------------------
  function brief(c) {
    if (c.status === 'ok') return (c.lowered_to || []).join(' ') + (c.imm !== undefined ? ` [imm ${c.imm}]` : '');
    return c.evidence || '';
  }
  function renderDiff() {
    const box = $('diff-groups');
    box.replaceChildren();
    if (!diff) return;
    let changed = 0;
    const counts = {};
    for (const [group, list] of Object.entries(diff.groups)) {
      const rows = list.filter((d) => textMatches(d.key, d.target, d.from.intrinsic, d.to.intrinsic) &&
        (!state.statuses.size || state.statuses.has(d.from.status) || state.statuses.has(d.to.status)));
      if (!rows.length) continue;
      changed += rows.length;
      // Capability changes come first (the service's order); churn (only the waits, nops and moves around a call
      // changed) is counted, and listed only when asked for.
      if (group === 'lowering churn' && !state.churn) {
        const show = el('button', { type: 'button', class: 'show-churn', text: 'list them' });
        show.addEventListener('click', () => { state.churn = true; writeHash(); renderDiff(); });
        box.append(el('section', { class: 'diff-group churn', 'data-group': group },
          el('h3', { text: `${group} (${rows.length})` }),
          el('p', { class: 'note' }, 'only waits, nops and moves changed around the call; ', show)));
        continue;
      }
      const table = el('table', {}, el('tr', {},
        ...['key', 'target', diff.from, diff.to, `${diff.from}: lowered to / evidence`, `${diff.to}: lowered to / evidence`]
          .map((h) => el('th', { text: h }))));
      for (const d of rows) {
        counts[d.to.status] = (counts[d.to.status] || 0) + 1;
        const tr = el('tr', { class: 'row', 'data-key': d.key, 'data-target': d.target, title: 'click: the cell in ' + diff.to },
          el('td', { text: d.key }), el('td', { text: d.target }), el('td', {}, badge(d.from.status)),
          el('td', {}, badge(d.to.status)), el('td', { class: 'ev', text: brief(d.from) }),
          el('td', { class: 'ev', text: brief(d.to) }));
        tr.addEventListener('click', () => showCell(diff.to, d.key, d.target, null));
        table.append(tr);
      }
      box.append(el('section', { class: 'diff-group', 'data-group': group },
        el('h3', { text: `${group} (${rows.length})` }), table));
    }
    $('diff-summary').textContent = `${diff.from} → ${diff.to}: ${changed} of ${diff.shared_cells} shared cells changed` +
      (state.q || state.statuses.size ? ' (filtered)' : '');
    renderLegend(counts);
    say('');
  }
  async function loadDiff() {
    if (!state.from || !state.to) return;
    say(`comparing ${state.from} and ${state.to}…`);
    try {
      diff = await api(`/v1/diff/${enc(state.from)}/${enc(state.to)}`);
    } catch (e) {
      diff = null;
      $('diff-groups').replaceChildren();
      say(e.message, true);
      return;
    }
    renderDiff();
  }

  // --- views and events ---------------------------------------------------------------------------------------
  function showView() {
    const isDiff = state.view === 'diff';
    $('detail').hidden = true;
    if (isDiff) $('intrinsic').hidden = true;
    $('tab-matrix').setAttribute('aria-pressed', String(!isDiff));
    $('tab-diff').setAttribute('aria-pressed', String(isDiff));
    $('matrix-view').hidden = isDiff;
    $('diff-view').hidden = !isDiff;
    $('flavor-label').hidden = isDiff;
    $('diff-pick').hidden = !isDiff;
    $('families').hidden = isDiff;
    $('group').parentElement.hidden = isDiff;
    if (isDiff) { showProvenance(null); loadDiff(); } else { loadMatrix(); }
  }

  function bind() {
    $('flavor').addEventListener('change', (e) => { state.flavor = e.target.value; writeHash(); loadMatrix(); });
    $('diff-from').addEventListener('change', (e) => { state.from = e.target.value; writeHash(); loadDiff(); });
    $('diff-to').addEventListener('change', (e) => { state.to = e.target.value; writeHash(); loadDiff(); });
    let timer = null;
    $('filter').addEventListener('input', (e) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        state.q = e.target.value.trim();
        writeHash();
        found = { term: '', keys: new Set(), intrinsic: '' };
        if (state.view === 'matrix') { applyMatrixFilter(); searchFilter(); } else { renderDiff(); }
      }, 60);
    });
    $('group').addEventListener('change', (e) => { state.group = e.target.checked; writeHash(); renderMatrix(); });
    $('tab-matrix').addEventListener('click', () => { state.view = 'matrix'; writeHash(); showView(); });
    $('tab-diff').addEventListener('click', () => { state.view = 'diff'; writeHash(); showView(); });
    $('detail-close').addEventListener('click', () => {
      $('detail').hidden = true;
      document.body.classList.remove('detail-open');
      if (selectedCell) selectedCell.classList.remove('selected');
      state.cell = null;
      writeHash();
    });
    document.addEventListener('keydown', (e) => { if (e.key === 'Escape') $('detail-close').click(); });
    // A link or a typed URL that changes only the #fragment: take the view it names.
    window.addEventListener('hashchange', () => {
      readHash();
      $('filter').value = state.q;
      $('group').checked = state.group;
      for (const [id, value] of [['flavor', state.flavor], ['diff-from', state.from], ['diff-to', state.to]]) $(id).value = value;
      showView();
    });
    const open = (td) => showCell(matrix.flavor, td.dataset.key, td.dataset.target, td);
    $('matrix').addEventListener('click', (e) => {
      const td = e.target.closest('td.cell[data-status]');
      if (td) open(td);
    });
    $('matrix').addEventListener('keydown', (e) => {
      const td = e.target.closest('td.cell[data-status]');
      if (td && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); open(td); }
    });
  }

  async function start() {
    if (site) {  // the site's pages of their own
      $('site-links').replaceChildren(el('a', { href: 'keys/index.html', text: 'every key' }), ' · ',
        el('a', { href: 'intrinsics/index.html', text: 'every intrinsic' }));
      $('site-links').hidden = false;
      $('json-api').replaceChildren('A static site written by archdb site; its JSON: ', el('a', { href: 'v1/flavors.json', text: 'v1/' }), '.');
    }
    readHash();
    bind();
    $('filter').value = state.q;
    $('group').checked = state.group;
    renderLegend(null);
    try {
      const answer = (initial && initial.flavors) || await api('/v1/flavors');
      flavors = answer.flavors;
      buildFlavor = answer.build_flavor || '';
    } catch (e) {
      say(`cannot read the flavors: ${e.message}`, true);
      return;
    }
    const usable = flavors.filter((f) => f.cells > 0);
    if (!flavors.some((f) => f.name === state.flavor && f.cells > 0)) state.flavor = defaultFlavor();
    if (!usable.some((f) => f.name === state.to)) state.to = state.flavor;
    if (!usable.some((f) => f.name === state.from)) {
      const i = usable.findIndex((f) => f.name === state.to);
      state.from = i > 0 ? usable[i - 1].name : (usable[0] || {}).name || '';
    }
    fillFlavorSelect($('flavor'), state.flavor);
    fillFlavorSelect($('diff-from'), state.from);
    fillFlavorSelect($('diff-to'), state.to);
    writeHash();
    showView();
  }

  document.addEventListener('DOMContentLoaded', start);
})();
