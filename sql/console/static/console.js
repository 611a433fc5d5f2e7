// percdb console: reads the status port's /api/ endpoints and draws the
// pages. No libraries: the charts are SVG drawn here.
"use strict";

const REFRESH_MS = 2000;
const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#1f6feb", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a"];

async function api(path, opts) {
  const r = await fetch("/api/" + path, Object.assign({ cache: "no-store" }, opts || {}));
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function num(v, digits) {
  if (v == null || isNaN(v)) return "";
  const d = digits == null ? (Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2) : digits;
  return Number(v).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: 0 });
}

function bytes(v) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return num(v, 1) + " " + u[i];
}

function time(t) {
  if (!t) return "";
  const d = new Date(t);
  return isNaN(d) || d.getFullYear() < 1971 ? "" : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

// lineChart draws series of samples (objects with t and the series' keys)
// into div as an SVG line chart with a time axis and a value axis.
function lineChart(div, samples, series, fmt) {
  const W = 600, H = 180, L = 48, R = 8, T = 8, B = 20;
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", role: "img" });
  const ts = samples.map(p => p.t);
  const t0 = ts.length ? ts[0] : 0, t1 = ts.length ? ts[ts.length - 1] : 1;
  let max = 0;
  for (const p of samples) for (const se of series) max = Math.max(max, p[se.key] || 0);
  max = max > 0 ? max * 1.1 : 1;
  const x = t => L + (t1 > t0 ? (t - t0) / (t1 - t0) : 1) * (W - L - R);
  const y = v => T + (1 - v / max) * (H - T - B);
  for (let i = 0; i <= 4; i++) {
    const v = max * i / 4;
    s.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "axis" }));
    const lbl = svg("text", { x: L - 4, y: y(v) + 3, "text-anchor": "end" });
    lbl.textContent = (fmt || num)(v);
    s.append(lbl);
  }
  if (ts.length) {
    for (const [t, anchor] of [[t0, "start"], [t1, "end"]]) {
      const lbl = svg("text", { x: x(t), y: H - 4, "text-anchor": anchor });
      lbl.textContent = new Date(t).toLocaleTimeString("en-GB");
      s.append(lbl);
    }
  }
  series.forEach((se, i) => {
    const pts = samples.map(p => `${x(p.t).toFixed(1)},${y(p[se.key] || 0).toFixed(1)}`).join(" ");
    if (pts) s.append(svg("polyline", { points: pts, fill: "none", stroke: se.color || COLORS[i], "stroke-width": 1.8, "data-series": se.key }));
  });
  const legend = el("div", { class: "legend" });
  series.forEach((se, i) => {
    const last = samples.length ? samples[samples.length - 1][se.key] : null;
    const sw = el("i"); sw.style.background = se.color || COLORS[i];
    legend.append(el("span", {}, sw, `${se.label} ${last == null ? "" : (fmt || num)(last)}`));
  });
  div.replaceChildren(s, legend);
}

// table renders rows into tbl with columns [{key, label, num, sql, fmt,
// cell}], sortable by clicking a header (state kept on the table).
function table(tbl, columns, rows, onRow) {
  const st = tbl._sort || (tbl._sort = { key: null, desc: true });
  if (st.key) {
    const col = columns.find(c => c.key === st.key);
    rows = rows.slice().sort((a, b) => {
      const va = a[st.key], vb = b[st.key];
      const c = (col && col.num) ? (va - vb) : String(va).localeCompare(String(vb));
      return st.desc ? -c : c;
    });
  }
  const head = el("tr", {}, ...columns.map(c => el("th", {
    onclick: () => { st.desc = st.key === c.key ? !st.desc : true; st.key = c.key; table(tbl, columns, rows, onRow); },
  }, c.label + (st.key === c.key ? (st.desc ? " ▾" : " ▴") : ""))));
  const body = rows.map(r => {
    const tr = el("tr", onRow ? { onclick: () => onRow(r) } : {}, ...columns.map(c => {
      const v = c.cell ? c.cell(r) : (c.fmt ? c.fmt(r[c.key]) : r[c.key]);
      return el("td", { class: c.num ? "num" : c.sql ? "sql" : "" }, v);
    }));
    return tr;
  });
  tbl.replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
  if (!rows.length) tbl.append(el("tbody", {}, el("tr", {}, el("td", { class: "empty", colspan: columns.length }, "none"))));
}

const pages = {
  async overview() {
    const o = await api("overview");
    const s = o.samples, last = s.length ? s[s.length - 1] : {};
    const tiles = [
      ["QPS", num(last.qps)], ["p99 latency", last.p99_ms == null ? "" : num(last.p99_ms) + " ms"],
      ["connections", num(o.totals.connections, 0)], ["statements", num(o.totals.queries, 0)],
      ["committed", num(o.totals.committed, 0)], ["conflicted", num(o.totals.conflicted, 0)],
      ["rolled back", num(o.totals.rolled_back, 0)], ["slow", num(o.totals.slow, 0)],
      ["disk", o.totals.disk_bytes == null ? "" : bytes(o.totals.disk_bytes)],
    ];
    document.getElementById("tiles").replaceChildren(...tiles.map(([k, v]) =>
      el("div", { class: "tile" }, el("div", { class: "v" }, v), el("div", { class: "k" }, k))));
    lineChart(document.getElementById("chart-qps"), s, [{ key: "qps", label: "statements/s" }, { key: "errors_ps", label: "errors/s" }]);
    lineChart(document.getElementById("chart-latency"), s, [{ key: "p50_ms", label: "p50" }, { key: "p99_ms", label: "p99" }]);
    lineChart(document.getElementById("chart-txns"), s, [{ key: "commits_ps", label: "committed" },
      { key: "conflicts_ps", label: "conflicted" }, { key: "rollbacks_ps", label: "rolled back" }, { key: "one_pc_ps", label: "1PC" }]);
    lineChart(document.getElementById("chart-conns"), s, [{ key: "connections", label: "connections" }], v => num(v, 0));
    return s.length;
  },
  async statements() {
    const rows = await api("statements");
    const tbl = document.getElementById("statements");
    if (!tbl._sort) tbl._sort = { key: "sum_ms", desc: true };
    table(tbl, [
      { key: "digest_text", label: "Statement", sql: true }, { key: "schema", label: "DB" },
      { key: "count", label: "Count", num: true, fmt: v => num(v, 0) }, { key: "sum_ms", label: "Total ms", num: true, fmt: num },
      { key: "avg_ms", label: "Avg ms", num: true, fmt: num }, { key: "p95_ms", label: "p95 ms", num: true, fmt: num },
      { key: "p99_ms", label: "p99 ms", num: true, fmt: num }, { key: "max_ms", label: "Max ms", num: true, fmt: num },
      { key: "rows_sent", label: "Rows sent", num: true, fmt: v => num(v, 0) },
      { key: "rows_examined", label: "Rows examined", num: true, fmt: v => num(v, 0) },
      { key: "errors", label: "Errors", num: true, fmt: v => num(v, 0) }, { key: "last_seen", label: "Last seen", fmt: time },
    ], rows, r => {
      const d = document.getElementById("statement-detail");
      d.textContent = `digest ${r.digest || "(other digests)"}\n${r.digest_text || ""}\n\nslowest (${num(r.max_ms)} ms):\n${r.sample || ""}`;
      d.className = "detail shown";
    });
    return rows.length;
  },
  async slow() {
    const rows = await api("slow");
    table(document.getElementById("slow"), [
      { key: "time", label: "Time", fmt: time }, { key: "query_ms", label: "ms", num: true, fmt: num },
      { key: "query", label: "Statement", sql: true }, { key: "db", label: "DB" }, { key: "user", label: "User" },
      { key: "conn_id", label: "Conn", num: true }, { key: "rows_sent", label: "Rows sent", num: true },
      { key: "rows_examined", label: "Rows examined", num: true }, { key: "errno", label: "Error", num: true },
      { key: "start_ts", label: "start_ts", num: true, fmt: v => v === "0" ? "" : v },
    ], rows);
    return rows.length;
  },
  async processes() {
    const rows = await api("processes");
    const kill = (id, query) => async ev => {
      ev.stopPropagation();
      if (!confirm(`${query ? "KILL QUERY" : "KILL"} ${id}?`)) return;
      try { await api("kill", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ id, query }) }); }
      catch (e) { alert(e.message); }
      refresh();
    };
    table(document.getElementById("processes"), [
      { key: "id", label: "Id", num: true }, { key: "user", label: "User" }, { key: "host", label: "Host" },
      { key: "db", label: "DB" }, { key: "command", label: "Command" }, { key: "time_s", label: "Time s", num: true },
      { key: "state", label: "State", cell: r => el("span", { class: r.state === "waiting for row lock" ? "waiting" : "" }, r.state) },
      { key: "info", label: "Info", sql: true }, { key: "txn_start_ts", label: "Txn start_ts", num: true, fmt: v => v === "0" ? "" : v },
      { key: "", label: "", cell: r => el("span", {},
        r.command === "Sleep" ? "" : el("button", { onclick: kill(r.id, true), "data-kill-query": r.id }, "KILL QUERY"), " ",
        el("button", { onclick: kill(r.id, false), "data-kill": r.id }, "KILL")) },
    ], rows);
    return rows.length;
  },
  async transactions() {
    const o = await api("transactions");
    table(document.getElementById("transactions"), [
      { key: "start_ts", label: "start_ts", num: true }, { key: "start_time", label: "Started", fmt: time },
      { key: "age_s", label: "Age s", num: true, fmt: num },
      { key: "state", label: "State", cell: r => el("span", { class: r.state === "LockWaiting" ? "waiting" : "" }, r.state) },
      { key: "conn_id", label: "Conn", num: true }, { key: "user", label: "User" }, { key: "db", label: "DB" },
      { key: "keys", label: "Keys", num: true }, { key: "bytes", label: "Bytes", num: true },
      { key: "statement", label: "Statement", sql: true },
    ], o.transactions);
    table(document.getElementById("lockwaits"), [
      { key: "conn_id", label: "Waiting conn", num: true }, { key: "start_ts", label: "Waiting start_ts", num: true },
      { key: "key", label: "Key (hex)", sql: true }, { key: "holding_conn_id", label: "Holding conn", num: true },
      { key: "holding_start_ts", label: "Holding start_ts", num: true },
    ], o.lock_waits);
    return o.transactions.length + o.lock_waits.length;
  },
  async heatmap() {
    const scope = document.getElementById("heat-scope");
    if (!scope._wired) {
      scope._wired = true;
      scope.addEventListener("change", refresh);
      if (location.hash.split("/")[1] === "cluster") scope.value = "cluster"; // #heatmap/cluster
    }
    const h = await api("heatmap" + (scope.value === "cluster" ? "?scope=cluster" : ""));
    document.getElementById("heat-scope-part").hidden = !h.in_cluster;
    const sel = document.getElementById("heat-measure");
    if (!sel._wired) { sel._wired = true; sel.addEventListener("change", refresh); }
    heatmapChart(document.getElementById("heatmap"), h, sel.value);
    return h.rows.length;
  },
  async storage() {
    const st = await api("storage");
    const tiles = (id, list) => document.getElementById(id).replaceChildren(...list.map(([k, v, cls]) =>
      el("div", { class: "tile" + (cls ? " " + cls : "") }, el("div", { class: "v" }, v), el("div", { class: "k" }, k))));
    if (st.note) document.getElementById("storage-note").textContent = st.note;
    const hitRate = s => s.block_cache_hits + s.block_cache_misses ? num(100 * s.block_cache_hits / (s.block_cache_hits + s.block_cache_misses), 1) + "%" : "";
    const stores = st.stores || [], read = stores.filter(s => !s.error);
    const sum = key => read.reduce((a, s) => a + (s[key] || 0), 0);
    tiles("storage-tiles", st.local ? [
      ["disk free", bytes(st.disk_available) + " of " + bytes(st.disk_total)],
      ["writes", st.disk_full ? "refused: disk full" : "accepted", st.disk_full ? "bad" : ""],
      ["reserve", st.disk_reserve ? bytes(st.disk_reserve) : "off"],
      ["write stall", (st.write_stalled ? "stalled now; " : "") + num(st.write_stall_seconds, 1) + " s in all", st.write_stalled ? "bad" : ""],
      ["writes refused (1021)", num(st.writes_refused, 0), st.writes_refused ? "bad" : ""],
      ["compactions that waited for room", num(st.compactions_waited_for_room, 0)],
      ["store on disk", bytes(st.store_bytes)], ["memtables", bytes(st.memtable_bytes)],
      ["compaction debt", bytes(st.compaction_debt_bytes)], ["read amplification", num(st.read_amp, 0)],
      ["compactions", num(st.compactions, 0)], ["flushes", num(st.flushes, 0)],
      ["block cache hit rate", hitRate(st)],
    ] : stores.length ? [
      ["stores read", `${num(read.length, 0)} of ${num(stores.length, 0)}`, read.length < stores.length ? "bad" : ""],
      ["stores on disk", bytes(sum("store_bytes"))], ["memtables", bytes(sum("memtable_bytes"))],
      ["compaction debt", bytes(sum("compaction_debt_bytes"))],
      ["stores refusing writes", num(read.filter(s => s.disk_full).length, 0), read.some(s => s.disk_full) ? "bad" : ""],
      ["stores stalled now", num(read.filter(s => s.write_stalled).length, 0), read.some(s => s.write_stalled) ? "bad" : ""],
      ["writes refused (1021)", num(sum("writes_refused"), 0)],
      ["compactions", num(sum("compactions"), 0)], ["flushes", num(sum("flushes"), 0)],
    ] : []);
    document.getElementById("storage-stores-part").hidden = st.local;
    document.getElementById("storage-tables-part").hidden = !st.local && !(st.tables || []).length;
    document.getElementById("storage-tables-hint").hidden = st.local;
    table(document.getElementById("storage-stores"), [
      { key: "store_id", label: "Store", num: true }, { key: "addr", label: "Address" }, { key: "status_addr", label: "Status port" },
      { key: "regions", label: "Regions", num: true }, { key: "leaders", label: "Leaders", num: true },
      { key: "store_bytes", label: "On disk", num: true, fmt: bytes },
      { key: "disk_available", label: "Disk free", num: true, cell: s => s.error ? "" : `${bytes(s.disk_available)} of ${bytes(s.disk_total)}` },
      { key: "disk_full", label: "Writes", cell: s => s.error ? "" : s.disk_full ? "refused: disk full" : "accepted" },
      { key: "write_stall_seconds", label: "Write stall", num: true, cell: s => s.error ? "" : (s.write_stalled ? "stalled; " : "") + num(s.write_stall_seconds, 1) + " s" },
      { key: "writes_refused", label: "Refused (1021)", num: true, fmt: v => num(v, 0) },
      { key: "memtable_bytes", label: "Memtables", num: true, fmt: bytes },
      { key: "compaction_debt_bytes", label: "Compaction debt", num: true, fmt: bytes },
      { key: "read_amp", label: "Read amp", num: true }, { key: "compactions", label: "Compactions", num: true, fmt: v => num(v, 0) },
      { key: "flushes", label: "Flushes", num: true, fmt: v => num(v, 0) },
      { key: "block_cache_hits", label: "Cache hits", num: true, cell: hitRate },
      { key: "gc_safe_point", label: "GC safe point", num: true, fmt: v => v === "0" ? "none yet" : v },
      { key: "gc_compactions", label: "GC compactions", num: true, fmt: v => num(v, 0) },
      { key: "tables", label: "Largest table", cell: s => s.tables && s.tables.length ? `${s.tables[0].table} (${bytes(s.tables[0].bytes)})` : s.tables_error || "" },
      { key: "error", label: "Error" },
    ], stores);
    table(document.getElementById("storage-tables"), [
      { key: "table", label: "Table" }, { key: "bytes", label: "Size", num: true, fmt: bytes },
    ], st.tables || []);
    // A cluster's stores: their non-empty levels (seven rows per store of
    // mostly empty levels would hide the ones that matter).
    const levels = st.local ? (st.levels || [])
      : read.flatMap(s => (s.levels || []).filter(l => l.files > 0).map(l => Object.assign({ store: s.store_id }, l)));
    table(document.getElementById("storage-levels"), [
      ...(st.local ? [] : [{ key: "store", label: "Store", num: true }]),
      { key: "level", label: "Level", num: true, fmt: v => "L" + v }, { key: "files", label: "Files", num: true, fmt: v => num(v, 0) },
      { key: "bytes", label: "Size", num: true, fmt: bytes }, { key: "score", label: "Compaction score", num: true, fmt: v => num(v, 2) },
    ], levels);
    const gc = st.gc;
    tiles("gc-tiles", [
      ["life time", gc.life_time], ["run interval", gc.run_interval],
      ["safe point", gc.safe_point === "0" ? "none yet" : time(gc.safe_point_time)], ["last run", time(gc.last_run) || "none yet"],
      ["runs (failed)", `${num(gc.runs, 0)} (${num(gc.failed_runs, 0)})`, gc.failed_runs ? "bad" : ""],
      ["versions deleted", num(gc.versions_deleted, 0)], ["reclaimed", bytes(gc.bytes_reclaimed)],
      ["ranges destroyed", num(gc.ranges_destroyed, 0)],
    ]);
    table(document.getElementById("gc-ranges"), [
      { key: "what", label: "What" }, { key: "bytes", label: "Size", num: true, fmt: bytes },
      { key: "not_before", label: "After", num: true, fmt: v => v === "0" ? "not stamped yet" : v },
    ], gc.pending_ranges);
    table(document.getElementById("gc-services"), [
      { key: "id", label: "Service" }, { key: "what", label: "What" }, { key: "time", label: "Holds at", fmt: time },
      { key: "expires", label: "Expires", fmt: time }, { key: "expired", label: "", fmt: v => v ? "expired" : "" },
    ], gc.service_safe_points);
    return st.local ? (st.tables || []).length : stores.length;
  },
  async cluster() {
    const c = await api("cluster");
    const note = document.getElementById("cluster-note");
    note.textContent = !c.in_cluster ? "This is a single node: its store, oracle and MySQL server are one process (see Storage)."
      : c.error ? "pd could not be read: " + c.error
      : "The cluster as its pd leader sees it, read from pd's API. The regions' rates are what their leaders served over their last heartbeat interval (about a second): every SQL node's traffic.";
    document.getElementById("cluster-tiles").replaceChildren(...[
      ["pd leader", (c.pd.find(m => m.leader) || {}).addr || ""], ["pd members", num(c.pd.length, 0)],
      ["stores up", `${num(c.stores.filter(s => s.state === "up").length, 0)} of ${num(c.stores.length, 0)}`,
        c.stores.some(s => s.state !== "up") ? "bad" : ""],
      ["regions", num(c.regions.length, 0)],
      ["oracle", c.oracle.timestamp === "0" ? "" : time(c.oracle.physical)],
    ].map(([k, v, cls]) => el("div", { class: "tile" + (cls ? " " + cls : "") }, el("div", { class: "v" }, v), el("div", { class: "k" }, k))));
    table(document.getElementById("cluster-stores"), [
      { key: "id", label: "Store", num: true }, { key: "addr", label: "Address" }, { key: "state", label: "State" },
      { key: "placement", label: "Placement" },
      { key: "replicas", label: "Regions", num: true }, { key: "leaders", label: "Leaders", num: true },
      { key: "used", label: "Data", num: true, fmt: v => v ? bytes(v) : "" },
      { key: "available", label: "Disk free", num: true, cell: s => s.capacity ? `${bytes(s.available)} of ${bytes(s.capacity)}` : "not reported" },
      { key: "low_space", label: "Space", cell: s => s.disk_full ? "full: writes refused" : s.low_space ? "low: no new replicas" : s.capacity ? "ok" : "" },
      { key: "last_heartbeat", label: "Last heartbeat", fmt: v => v.startsWith("0001") ? "not heard from" : time(v) },
    ], c.stores);
    table(document.getElementById("cluster-pd"), [
      { key: "addr", label: "Address" }, { key: "leader", label: "Role", fmt: v => v ? "leader" : "follower" },
    ], c.pd);
    table(document.getElementById("cluster-regions"), [
      { key: "id", label: "Region", num: true }, { key: "table", label: "Starts in" },
      { key: "start", label: "Start key", fmt: v => v || "(start)" }, { key: "end", label: "End key", fmt: v => v || "(end)" },
      { key: "leader", label: "Leader store", num: true }, { key: "peers", label: "Peers", fmt: v => (v || []).join(", ") },
      { key: "version", label: "Version", num: true }, { key: "conf_ver", label: "Conf ver", num: true },
      { key: "approximate_size", label: "Size", num: true, fmt: v => v ? bytes(v) : "" },
      { key: "read_keys_per_s", label: "Read keys/s", num: true, fmt: v => num(v, 1) },
      { key: "read_bytes_per_s", label: "Read/s", num: true, fmt: v => bytes(v) },
      { key: "write_keys_per_s", label: "Written keys/s", num: true, fmt: v => num(v, 1) },
      { key: "write_bytes_per_s", label: "Written/s", num: true, fmt: v => bytes(v) },
    ], c.regions);
    return c.regions.length;
  },
};

// heatmapChart draws h's rows for measure as an SVG grid: a row per part
// of the key space, a column per interval, the colour's depth the value on
// a log scale of the largest.
function heatmapChart(div, h, measure) {
  if (!h.rows.length) {
    div.replaceChildren(el("p", { class: "empty" }, "no requests yet"));
    return;
  }
  const cols = h.times.length, rows = h.rows.length;
  const LW = 260, CW = Math.max(4, Math.min(48, Math.floor(900 / Math.max(cols, 1)))), RH = 18, TH = 20;
  const W = LW + cols * CW + 8, H = rows * RH + TH;
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" });
  let max = 0;
  for (const r of h.rows) for (const v of r[measure]) max = Math.max(max, v);
  const depth = v => v <= 0 || max <= 0 ? 0 : Math.log1p(v) / Math.log1p(max);
  const isBytes = measure.endsWith("bytes");
  h.rows.forEach((r, i) => {
    const y = i * RH;
    const lbl = svg("text", { x: LW - 6, y: y + RH - 5, "text-anchor": "end", class: "heat-label" });
    const name = `${r.table} ${r.part}` + (r.region ? ` · region ${r.region}` : "");
    lbl.textContent = name;
    s.append(lbl);
    r[measure].forEach((v, j) => {
      const d = depth(v);
      const cell = svg("rect", { x: LW + j * CW, y: y + 1, width: CW - 1, height: RH - 2,
        fill: d === 0 ? "#eef1f4" : `rgba(198, 40, 40, ${(0.12 + 0.88 * d).toFixed(3)})`, "data-value": v });
      const tip = svg("title");
      tip.textContent = name + (r.range ? `\n${r.range}` : "") + `\n${new Date(h.times[j]).toLocaleTimeString("en-GB")} +${h.interval_s}s\n` +
        `read ${num(r.read_keys[j], 0)} keys, ${bytes(r.read_bytes[j])}\nwritten ${num(r.write_keys[j], 0)} keys, ${bytes(r.write_bytes[j])}\n${num(r.requests[j], 0)} requests`;
      cell.append(tip);
      s.append(cell);
    });
  });
  // The first column's time, and the last one's where they do not meet.
  const ends = cols * CW >= 140 ? [[0, "start"], [cols - 1, "end"]] : [[0, "start"]];
  for (const [j, anchor] of ends) {
    const t = svg("text", { x: LW + (anchor === "end" ? (j + 1) * CW : j * CW), y: H - 5, "text-anchor": anchor, class: "heat-label" });
    t.textContent = new Date(h.times[j]).toLocaleTimeString("en-GB");
    s.append(t);
  }
  const legend = el("div", { class: "legend" }, `darkest: ${isBytes ? bytes(max) : num(max, 0)} in ${h.interval_s} s`);
  div.replaceChildren(s, legend);
}

function current() {
  const p = location.hash.replace(/^#/, "").split("/")[0];
  return pages[p] ? p : "overview";
}

let timer = null;
async function refresh() {
  clearTimeout(timer);
  const p = current();
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.page === p);
  for (const s of document.querySelectorAll(".page")) s.classList.toggle("active", s.id === "page-" + p);
  const status = document.getElementById("status");
  try {
    const n = await pages[p]();
    status.textContent = "updated " + new Date().toLocaleTimeString("en-GB");
    document.body.dataset.rendered = p;
    document.body.dataset.rows = n;
  } catch (e) {
    status.textContent = "error: " + e.message;
    document.body.dataset.error = e.message;
  }
  timer = setTimeout(refresh, REFRESH_MS);
}

window.addEventListener("hashchange", refresh);
refresh();
