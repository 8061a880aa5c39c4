// The Abacus dashboard: polls the server's JSON endpoints (api/status every
// second, api/series and api/slowlog less often) and draws with uPlot.
// Everything it shows comes from INFO, SLOWLOG, TS.QUERYINDEX and
// TS.MRANGE; the rates are differences of INFO's counters between polls.
(function () {
  "use strict";

  const $ = (s) => document.querySelector(s);
  const palette = ["#4e79d8", "#f28e2b", "#3fa34d", "#e15759", "#9c6ade",
    "#2fb5b0", "#d4a21a", "#f06fa4", "#8c6d4f", "#7f8ba0"];
  window.abacusPalette = palette;

  // ---- formatting ----
  function fmtNum(n) {
    if (n == null || !isFinite(n)) return "–";
    const a = Math.abs(n);
    if (a >= 1e12) return (n / 1e12).toFixed(2) + "T";
    if (a >= 1e9) return (n / 1e9).toFixed(2) + "G";
    if (a >= 1e6) return (n / 1e6).toFixed(2) + "M";
    if (a >= 1e4) return (n / 1e3).toFixed(1) + "k";
    if (a >= 100 || Number.isInteger(n)) return String(Math.round(n));
    if (a >= 1) return n.toFixed(2);
    return n.toPrecision(3);
  }
  function fmtInt(n) { return n == null ? "–" : Math.round(n).toLocaleString("en-US"); }
  function fmtBytes(n) {
    if (n == null || !isFinite(n)) return "–";
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i === 0 ? String(Math.round(n)) : n.toFixed(n >= 100 ? 0 : 1)) + " " + u[i];
  }
  function fmtUs(us) {
    if (us == null || !isFinite(us)) return "–";
    if (us < 1000) return us.toFixed(us < 10 ? 2 : 1) + " µs";
    if (us < 1e6) return (us / 1000).toFixed(2) + " ms";
    return (us / 1e6).toFixed(2) + " s";
  }
  function fmtUptime(s) {
    const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    if (d > 0) return d + "d " + h + "h";
    if (h > 0) return h + "h " + m + "m";
    return m + "m " + (s % 60) + "s";
  }
  function fmtBucket(ms) {
    if (ms % 86400000 === 0) return ms / 86400000 + " d";
    if (ms % 3600000 === 0) return ms / 3600000 + " h";
    if (ms % 60000 === 0) return ms / 60000 + " min";
    return ms / 1000 + " s";
  }
  function css(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

  function setStat(id, value, sub, raw) {
    const el = document.getElementById(id);
    el.querySelector(".value").textContent = value;
    if (sub != null) el.querySelector(".sub").textContent = sub;
    if (raw != null) el.dataset.value = String(raw);
  }

  // ---- charts ----
  // chart makes a uPlot chart filling el's width and its CSS height (less
  // the legend's, which has a fixed height), so nothing moves as data come.
  function chart(el, series, opts) {
    const muted = css("--muted"), grid = css("--grid");
    const legend = opts.legend !== false;
    const height = () => el.clientHeight - (legend ? 64 : 0);
    const axis = (extra) => Object.assign({
      stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 },
      font: "11px system-ui, sans-serif", labelFont: "12px system-ui, sans-serif",
    }, extra);
    const u = new uPlot({
      width: el.clientWidth, height: height(),
      scales: { x: opts.span ? { time: true, range: (u, min, max) => [max - opts.span, max] } : { time: true } },
      legend: { show: legend, live: true },
      cursor: { drag: { x: true, y: false } },
      series: [{ label: "time", value: "{YYYY}-{MM}-{DD} {HH}:{mm}:{ss}" }].concat(series),
      axes: [
        axis({ label: opts.xLabel || "", labelSize: opts.xLabel ? 20 : 0 }),
        axis({ label: opts.yLabel, labelSize: 20, size: 62, values: (u, vals) => vals.map(opts.fmt || fmtNum) }),
      ],
    }, opts.data, el);
    const ro = new ResizeObserver(() => u.setSize({ width: el.clientWidth, height: height() }));
    ro.observe(el);
    u._ro = ro;
    return u;
  }
  function destroy(u) {
    if (!u) return;
    u._ro.disconnect();
    u.destroy();
  }

  // ---- status ----
  const HISTORY = 300; // samples of the mini charts: 5 minutes at 1 s
  const hist = { t: [], ops: [], mem: [] };
  let prev = null, minis = {};

  function buildMinis() {
    destroy(minis.ops); destroy(minis.mem);
    minis.ops = chart($("#mini-ops"), [{ label: "commands/s", stroke: palette[0], width: 1.5, fill: palette[0] + "22" }],
      { legend: false, span: HISTORY, yLabel: "commands/s", data: [hist.t, hist.ops] });
    minis.mem = chart($("#mini-mem"), [{ label: "used_memory", stroke: palette[2], width: 1.5, fill: palette[2] + "22" }],
      { legend: false, span: HISTORY, yLabel: "bytes", fmt: fmtBytes, data: [hist.t, hist.mem] });
  }

  function setConn(state, text) {
    const c = $("#conn");
    c.dataset.state = state;
    $("#conn-text").textContent = text;
  }

  function showStatus(s) {
    setConn("live", "live");
    $("#version").textContent = "v" + s.version + " · Redis " + s.redisVersion;
    $("#uptime").textContent = "up " + fmtUptime(s.uptimeSeconds);
    setStat("stat-ops", fmtNum(s.opsPerSec), "per s · " + fmtNum(s.commands) + " total", s.opsPerSec);
    setStat("stat-clients", fmtInt(s.clients), s.blockedClients + " blocked · max " + fmtNum(s.maxClients), s.clients);
    const mem = $("#stat-memory");
    const fill = mem.querySelector(".fill");
    if (s.maxMemory > 0) {
      const pct = 100 * s.usedMemory / s.maxMemory;
      setStat("stat-memory", fmtBytes(s.usedMemory), pct.toFixed(1) + "% of " + fmtBytes(s.maxMemory) + " (" + s.maxMemoryPolicy + ")", s.usedMemory);
      fill.style.width = Math.min(100, pct) + "%";
      fill.className = "fill" + (pct >= 95 ? " full" : pct >= 80 ? " high" : "");
    } else {
      setStat("stat-memory", fmtBytes(s.usedMemory), "RSS " + fmtBytes(s.usedMemoryRss), s.usedMemory);
      fill.style.width = "0";
    }
    mem.dataset.max = String(s.maxMemory);
    setStat("stat-keys", fmtInt(s.keys), fmtInt(s.expires) + " with a TTL", s.keys);
    // Rates between this poll and the last; totals until there is one.
    let hits = s.hits, misses = s.misses, calls = s.commandCalls, usec = s.commandUsec, dt = 0;
    if (prev && s.serverTimeMs > prev.serverTimeMs) {
      dt = (s.serverTimeMs - prev.serverTimeMs) / 1000;
      hits -= prev.hits; misses -= prev.misses; calls -= prev.commandCalls; usec -= prev.commandUsec;
    }
    // With no lookup since the last poll, the ratio since the start.
    let lookups = hits + misses, since = dt ? "in " + dt.toFixed(0) + " s" : "since start";
    if (lookups === 0 && s.hits + s.misses > 0) {
      hits = s.hits; lookups = s.hits + s.misses; since = "since start";
    }
    setStat("stat-hits", lookups > 0 ? (100 * hits / lookups).toFixed(1) + "%" : "–", fmtNum(lookups) + " lookups " + since);
    let lat = calls > 0 ? usec / calls : null;
    let latSub = "mean" + (dt ? ", last " + dt.toFixed(0) + " s" : ", since start");
    // INFO latencystats, when the server prints it, gives percentiles.
    if (s.latency) {
      let best = null;
      for (const [cmd, l] of Object.entries(s.latency)) if (!best || (l.percentiles.p99 || 0) > (best[1].percentiles.p99 || 0)) best = [cmd, l];
      if (best && best[1].percentiles.p99 != null) latSub = "p50 " + fmtUs(best[1].percentiles.p50) + " · p99 " + fmtUs(best[1].percentiles.p99) + " (" + best[0] + ")";
    }
    setStat("stat-latency", fmtUs(lat), latSub);
    if (prev && dt) {
      setStat("stat-net", fmtBytes((s.netInputBytes - prev.netInputBytes) / dt) + "/s",
        "in · out " + fmtBytes((s.netOutputBytes - prev.netOutputBytes) / dt) + "/s");
    } else {
      setStat("stat-net", fmtBytes(s.netInputBytes), "in · out " + fmtBytes(s.netOutputBytes));
    }
    prev = s;
    hist.t.push(s.serverTimeMs / 1000); hist.ops.push(s.opsPerSec); hist.mem.push(s.usedMemory);
    if (hist.t.length > HISTORY) { hist.t.shift(); hist.ops.shift(); hist.mem.shift(); }
    minis.ops.setData([hist.t, hist.ops]);
    minis.mem.setData([hist.t, hist.mem]);
    document.body.dataset.statusPolls = String((+document.body.dataset.statusPolls || 0) + 1);
  }

  async function getJSON(url) {
    const r = await fetch(url, { cache: "no-store" });
    const body = await r.json().catch(() => ({ error: r.status + " " + r.statusText }));
    if (!r.ok) throw Object.assign(new Error(body.error || r.statusText), { status: r.status });
    return body;
  }

  // poll runs f every ms milliseconds, one call at a time.
  function poll(f, ms) {
    const run = async () => { try { await f(); } finally { setTimeout(run, typeof ms === "function" ? ms() : ms); } };
    run();
  }

  poll(async () => {
    try {
      showStatus(await getJSON("api/status"));
    } catch (e) {
      setConn("error", e.status === 503 ? "loading" : "offline");
    }
  }, 1000);

  // ---- series explorer ----
  const params = new URLSearchParams(location.search);
  const sel = { filter: params.get("filter") || "", window: params.get("window") || "1h" };
  let seriesChart = null, seriesKeys = "";
  const refreshMs = { "5m": 5000, "1h": 15000, "24h": 60000, "7d": 60000 };

  function showWindow() {
    for (const b of document.querySelectorAll("[data-window]")) b.setAttribute("aria-pressed", String(b.dataset.window === sel.window));
  }

  function info(text, err) {
    const el = $("#series-info");
    el.textContent = text;
    el.classList.toggle("err", !!err);
  }

  function drawSeries(r) {
    const box = $("#series-chart");
    const keys = r.series.map((s) => s.key).join("\n");
    const data = [r.x].concat(r.series.map((s) => s.values));
    let points = 0;
    for (const s of r.series) for (const v of s.values) if (v != null) points++;
    // A common "unit" label names the y axis; otherwise the aggregation does.
    const units = new Set(r.series.map((s) => s.labels.unit || ""));
    const yLabel = units.size === 1 && !units.has("") ? [...units][0] : "avg per " + fmtBucket(r.bucketMs);
    if (!seriesChart || keys !== seriesKeys || seriesChart._yLabel !== yLabel) {
      destroy(seriesChart);
      seriesChart = chart(box, r.series.map((s, i) => ({
        label: s.key, stroke: palette[i % palette.length], width: 1.5, spanGaps: true,
        points: { show: points / Math.max(1, r.series.length) < 60, size: 5 },
        value: (u, v) => v == null ? "–" : fmtNum(v),
      })), { yLabel, xLabel: "local time", data });
      seriesChart._yLabel = yLabel;
      seriesKeys = keys;
    } else {
      seriesChart.setData(data);
    }
    box.dataset.points = String(points);
    box.dataset.keys = keys;
  }

  function showKeys(r) {
    const el = $("#series-keys");
    el.textContent = "";
    r.keys.forEach((k, i) => {
      const chip = document.createElement("span");
      chip.className = "key";
      const dot = document.createElement("i");
      dot.style.background = i < r.charted ? palette[i % palette.length] : "transparent";
      chip.append(dot, k);
      el.append(chip);
    });
  }

  let seriesGen = 0;
  async function loadSeries() {
    if (!sel.filter) return;
    const gen = seriesGen;
    try {
      const r = await getJSON("api/series?filter=" + encodeURIComponent(sel.filter) + "&window=" + sel.window);
      if (gen !== seriesGen) return; // the filter or window changed meanwhile
      let text = r.matched + (r.matched === 1 ? " series matches" : " series match");
      if (r.matched > r.charted) text += "; the first " + r.charted + " are drawn";
      text += " · " + r.aggregation + " per " + fmtBucket(r.bucketMs) + " · TS.MRANGE " + sel.window;
      info(text);
      showKeys(r);
      drawSeries(r);
    } catch (e) {
      if (gen === seriesGen) info(e.message, true);
    }
  }

  function select(changes) {
    Object.assign(sel, changes);
    seriesGen++;
    showWindow();
    const q = new URLSearchParams();
    if (sel.filter) q.set("filter", sel.filter);
    q.set("window", sel.window);
    history.replaceState(null, "", "?" + q.toString());
    loadSeries();
  }

  $("#filter").value = sel.filter;
  $("#series-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    select({ filter: $("#filter").value.trim() });
  });
  for (const b of document.querySelectorAll("[data-window]")) b.addEventListener("click", () => select({ window: b.dataset.window }));
  showWindow();
  poll(loadSeries, () => refreshMs[sel.window] || 15000);

  // ---- slow log ----
  poll(async () => {
    let r;
    try { r = await getJSON("api/slowlog"); } catch (e) { return; }
    $("#slow-len").textContent = "(" + r.length + ")";
    const body = $("#slow-body");
    body.textContent = "";
    if (r.entries.length === 0) {
      const tr = body.insertRow();
      const td = tr.insertCell();
      td.colSpan = 5; td.className = "muted"; td.textContent = "No command has been slower than slowlog-log-slower-than.";
      return;
    }
    for (const e of r.entries) {
      const tr = body.insertRow();
      tr.insertCell().textContent = e.id;
      tr.insertCell().textContent = new Date(e.time * 1000).toLocaleTimeString();
      const d = tr.insertCell(); d.className = "num"; d.textContent = fmtUs(e.durationUs);
      const c = tr.insertCell(); c.className = "cmd"; c.textContent = (e.args || []).join(" ");
      tr.insertCell().textContent = e.name ? e.name + " " + e.client : e.client;
    }
  }, 5000);

  // ---- top keys ----
  // Sampled by the server (a SCAN step per refresh, MEMORY USAGE and, under
  // an LFU policy, OBJECT FREQ of the keys it returns): see api/topkeys.
  function showTop(id, rows, fmt, empty) {
    const body = $(id);
    body.textContent = "";
    if (rows.length === 0) {
      const td = body.insertRow().insertCell();
      td.colSpan = 2; td.className = "muted"; td.textContent = empty;
      return;
    }
    for (const r of rows) {
      const tr = body.insertRow();
      const k = tr.insertCell(); k.className = "k"; k.textContent = r.key; k.title = r.key;
      const v = tr.insertCell(); v.className = "num"; v.textContent = fmt(r.value);
    }
  }
  poll(async () => {
    let r;
    try { r = await getJSON("api/topkeys"); } catch (e) { return; }
    const pass = r.lastPassKeys > 0 ? "last full pass " + fmtInt(r.lastPassKeys) + " keys" : "first pass";
    $("#top-info").textContent = "(db" + r.db + ", sampled: " + fmtInt(r.scannedInPass) + " of " + fmtInt(r.keysInDb) + " keys in this pass; " + pass + ")";
    showTop("#top-mem", r.byMemory, fmtBytes, "No keys in db" + r.db + ".");
    showTop("#top-freq", r.byAccess, fmtInt, r.lfu ? "No keys seen yet." : "Not counted: " + r.accessUnknown + ".");
  }, 10000);

  // ---- theme ----
  buildMinis();
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    buildMinis();
    destroy(seriesChart); seriesChart = null; seriesKeys = "";
    loadSeries();
  });
})();
