// The inspector page: Tools, Sessions, Jobs (jobs.js) and Runs over the JSON API under /api/.
// No framework and no build step. State the tests read is kept in data-* attributes.
"use strict";

const TOKEN = (() => {
  const given = new URLSearchParams(location.search).get("token");
  if (given) {
    sessionStorage.setItem("inspector-token", given);
    return given;
  }
  return sessionStorage.getItem("inspector-token") || "";
})();

const $ = (selector, root = document) => root.querySelector(selector);
const PROVIDERS_FALLBACK = ["gemini", "gemini-legacy", "openai", "openai-strict", "anthropic", "mcp"];
const state = { info: null, app: null, page: null, tools: [], providers: PROVIDERS_FALLBACK };

// -- small helpers ---------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "style") node.style.cssText = value; // CSSOM: allowed by the page's CSP
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function json(value, indent = 2) {
  return JSON.stringify(value, null, indent);
}

function clip(text, limit = 400) {
  const flat = String(text);
  return flat.length <= limit ? flat : flat.slice(0, limit - 1) + "…";
}

function when(seconds) {
  if (!seconds) return "";
  const d = new Date(seconds * 1000);
  return d.toLocaleString(undefined, { hour12: false });
}

function showBanner(message) {
  const banner = $("#banner");
  banner.textContent = message;
  banner.hidden = !message;
}

class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

function withApp(path) {
  if (!state.app) return path;
  return path + (path.includes("?") ? "&" : "?") + "app=" + encodeURIComponent(state.app);
}

async function api(path, options = {}) {
  const response = await fetch(withApp(path), {
    ...options,
    headers: { "X-Inspector-Token": TOKEN, "Content-Type": "application/json" },
  });
  let body = null;
  try {
    body = await response.json();
  } catch (_) {
    body = null;
  }
  if (!response.ok) {
    const message = (body && body.error) || `HTTP ${response.status}`;
    throw new ApiError(response.status, message, body);
  }
  return body;
}

// POST a JSON body; call onEvent(name, data) for each server-sent event until the end.
async function postStream(path, body, onEvent) {
  const response = await fetch(withApp(path), {
    method: "POST",
    headers: { "X-Inspector-Token": TOKEN, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    let detail = null;
    try {
      detail = await response.json();
    } catch (_) {
      detail = null;
    }
    throw new ApiError(response.status, (detail && detail.error) || `HTTP ${response.status}`);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      onEvent(name, data.length ? JSON.parse(data.join("\n")) : null);
    }
  }
}

// -- page frame ------------------------------------------------------------------------------

const PAGE_TITLES = { tools: "Tools", sessions: "Sessions", jobs: "Jobs", runs: "Runs" };

function currentApp() {
  return (state.info.apps || []).find((a) => a.name === state.app) || null;
}

function renderFrame() {
  const nav = $("#nav");
  nav.replaceChildren(
    ...state.info.pages.map((page) =>
      el("a", { href: "#" + page, dataset: { nav: page }, text: PAGE_TITLES[page] || page }),
    ),
  );
  $("#title").textContent = "Inspector · " + (state.info.title || "");
  const pick = $("#app");
  const apps = state.info.apps || [];
  pick.replaceChildren(...apps.map((a) => el("option", { value: a.name, text: a.name })));
  $("#app-pick").hidden = apps.length < 2;
  pick.value = state.app;
  const app = currentApp();
  const label = $("#model-label");
  if (app && app.replay) {
    label.hidden = false;
    label.dataset.replay = "true";
    label.textContent = "replay model: " + (app.model || "scripted turns, no model is called");
  } else if (app && app.model) {
    label.hidden = false;
    label.dataset.replay = "false";
    label.textContent = "model: " + app.model;
  } else {
    label.hidden = true;
  }
}

function route() {
  const [page, ...rest] = (location.hash.replace(/^#/, "") || "").split("/");
  const pages = state.info.pages;
  const chosen = pages.includes(page) ? page : pages[0];
  state.page = chosen;
  document.body.dataset.page = chosen;
  for (const section of document.querySelectorAll("[data-page]")) {
    section.hidden = section.dataset.page !== chosen;
  }
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === chosen) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const arg = rest.map(decodeURIComponent);
  if (chosen === "tools") Tools.show(arg[0]);
  else if (chosen === "sessions") Sessions.show(arg[0], arg[1]);
  else if (chosen === "jobs") Jobs.show(arg[0]);
  else if (chosen === "runs") Runs.show(arg[0]);
}

async function start() {
  window.addEventListener("error", (e) => {
    document.body.dataset.error = String(e.message || e);
    showBanner("page error: " + (e.message || e));
  });
  window.addEventListener("unhandledrejection", (e) => {
    const reason = e.reason && e.reason.message ? e.reason.message : String(e.reason);
    document.body.dataset.error = reason;
    showBanner(reason);
  });
  if (!TOKEN) {
    showBanner("no token: open the URL the command printed (it ends with ?token=...)");
    document.body.dataset.ready = "error";
    return;
  }
  try {
    state.info = await api("/api/info");
  } catch (err) {
    showBanner(String(err.message || err));
    document.body.dataset.ready = "error";
    return;
  }
  const apps = state.info.apps || [];
  const wanted = new URLSearchParams(location.search).get("app");
  state.app = apps.some((a) => a.name === wanted) ? wanted : apps.length ? apps[0].name : null;
  renderFrame();
  $("#app").addEventListener("change", (e) => {
    state.app = e.target.value;
    const params = new URLSearchParams(location.search);
    params.set("app", state.app);
    history.replaceState(null, "", "?" + params.toString() + "#" + state.page);
    Tools.loaded = null;
    Tools.selected = null;
    Sessions.reset();
    Jobs.reset();
    Runs.loaded = null;
    renderFrame();
    route();
  });
  $("#tool-filter").addEventListener("input", () => Tools.renderList());
  $("#new-session").addEventListener("click", () => Sessions.newChat());
  window.addEventListener("hashchange", route);
  route();
  document.body.dataset.ready = "true";
}

// -- Tools -----------------------------------------------------------------------------------

const Tools = {
  loaded: null, // the app whose tools are loaded
  selected: null,
  reports: {},

  async load() {
    if (this.loaded === state.app) return;
    const body = await api("/api/tools");
    state.tools = body.tools;
    state.providers = body.providers || PROVIDERS_FALLBACK;
    this.loaded = state.app;
    this.reports = {};
    this.renderList();
  },

  renderList() {
    const filter = $("#tool-filter").value.trim().toLowerCase();
    const list = $("#tool-list");
    list.dataset.count = String(state.tools.length);
    list.replaceChildren(
      ...state.tools
        .filter((t) => !filter || t.name.toLowerCase().includes(filter))
        .map((t) => {
          const mode = t.error ? "error" : t.schedule.mode;
          return el(
            "li",
            {
              dataset: { tool: t.name, schedule: mode },
              "aria-selected": t.name === this.selected ? "true" : "false",
              onclick: () => (location.hash = "#tools/" + encodeURIComponent(t.name)),
            },
            el("span", {}, t.name, el("br"), el("span", { class: "origin", text: t.origin })),
            el("span", { class: "badge " + mode, text: t.error ? "broken" : mode }),
          );
        }),
    );
  },

  async show(name) {
    await this.load();
    if (!name && state.tools.length) name = state.tools[0].name;
    const detail = $("#tool-detail");
    if (name && name === this.selected && detail.dataset.name === name && detail.dataset.loaded === "true") {
      return; // already shown (the page opened on it, then the address named it)
    }
    this.selected = name || null;
    const render = (this.renders = (this.renders || 0) + 1);
    this.renderList();
    const tool = state.tools.find((t) => t.name === name);
    detail.dataset.loaded = "false";
    if (!tool) {
      detail.replaceChildren(el("p", { class: "muted", text: "Pick a tool." }));
      return;
    }
    detail.dataset.name = tool.name;
    if (tool.error) {
      detail.replaceChildren(
        el("h2", { text: tool.name }),
        el("p", { class: "status-error", dataset: { toolError: "" }, text: tool.error }),
      );
      return;
    }
    const flags = tool.flags;
    const flagChips = Object.entries(flags)
      .filter(([k, v]) => v && !(Array.isArray(v) && !v.length) && k !== "timeout" && k !== "scopes")
      .map(([k, v]) => el("span", { class: "chip", dataset: { flag: k }, text: v === true ? k : `${k}: ${v}` }));
    if (flags.timeout !== null) flagChips.push(el("span", { class: "chip", dataset: { flag: "timeout" }, text: `timeout ${flags.timeout} s` }));
    for (const scope of flags.scopes) flagChips.push(el("span", { class: "chip", dataset: { flag: "scope" }, text: "scope " + scope }));
    const schedule = tool.schedule;
    const tabs = el("div", { class: "tabs", role: "tablist", dataset: { providerTabs: "" } });
    const panel = el("div", { class: "panel", dataset: { providerPanel: "" } });
    detail.replaceChildren(
      el("h2", { text: tool.name }),
      el("div", { class: "muted", text: tool.origin }),
      el("pre", { class: "description", dataset: { description: "" }, text: tool.description || "(no description)" }),
      el("div", { dataset: { flags: "" } }, flagChips.length ? flagChips : el("span", { class: "muted", text: "no flags" })),
      el(
        "div",
        { class: "schedule " + schedule.mode, dataset: { scheduleMode: schedule.mode } },
        el("strong", { text: "Under AUTO: " }),
        schedule.summary,
      ),
      el("div", { class: "tool-grid" }, el("div", {}, tabs, panel), TryIt.form(tool)),
    );
    const reports = await Promise.all(
      state.providers.map((p) =>
        this.reports[tool.name + "\n" + p]
          ? Promise.resolve(this.reports[tool.name + "\n" + p])
          : api(`/api/tools/${encodeURIComponent(tool.name)}?provider=${p}`),
      ),
    );
    if (render !== this.renders) return; // another tool (or this one again) is being shown
    state.providers.forEach((p, i) => (this.reports[tool.name + "\n" + p] = reports[i]));
    const select = (provider) => {
      for (const b of tabs.children) b.setAttribute("aria-selected", b.dataset.providerTab === provider ? "true" : "false");
      const report = this.reports[tool.name + "\n" + provider];
      panel.dataset.provider = provider;
      const diagnostics = report.diagnostics || [];
      panel.replaceChildren(
        diagnostics.length
          ? el(
              "div",
              { dataset: { diagnostics: provider } },
              diagnostics.map((d) =>
                el("div", { class: "diagnostic", dataset: { diagnosticCode: d.code } },
                  `${d.level} ${d.code}${d.parameter ? " [" + d.parameter + "]" : ""}: ${d.message}`),
              ),
            )
          : el("div", { class: "muted", dataset: { diagnostics: provider }, text: "no diagnostics for " + provider }),
        el("pre", { class: "json", dataset: { providerJson: provider, json: json(report, 0) }, text: json(report.schema) }),
      );
    };
    tabs.replaceChildren(
      ...state.providers.map((p, i) => {
        const count = (reports[i].diagnostics || []).length;
        return el(
          "button",
          { type: "button", role: "tab", dataset: { providerTab: p, diagnostics: String(count) }, onclick: () => select(p) },
          p,
          count ? el("span", { class: "count", text: ` (${count})` }) : null,
        );
      }),
    );
    select(state.providers[0]);
    detail.dataset.loaded = "true";
  },
};

// -- the try-it form -------------------------------------------------------------------------

function fieldKind(schema) {
  let s = schema || {};
  let optional = false;
  if (Array.isArray(s.anyOf)) {
    const rest = s.anyOf.filter((x) => x.type !== "null");
    optional = rest.length < s.anyOf.length;
    if (rest.length === 1) s = { ...rest[0], description: schema.description, default: schema.default };
    else return { kind: "json", schema: s, optional };
  }
  let type = s.type;
  if (Array.isArray(type)) {
    const rest = type.filter((t) => t !== "null");
    optional = optional || rest.length < type.length;
    type = rest.length === 1 ? rest[0] : null;
  }
  if (Array.isArray(s.enum)) return { kind: "enum", schema: s, optional };
  if (type === "string" && !s.contentEncoding) return { kind: "string", schema: s, optional };
  if (type === "integer" || type === "number") return { kind: type, schema: s, optional };
  if (type === "boolean") return { kind: "boolean", schema: s, optional };
  return { kind: "json", schema: s, optional };
}

// A JSON value shaped like the schema, for a box to start from: each property of an
// object (references followed), its default when it has one, else an empty value.
function skeleton(schema, defs, depth = 0) {
  let s = schema || {};
  if (depth > 6) return null;
  if (typeof s.$ref === "string") {
    const name = s.$ref.split("/").pop();
    s = { ...((defs || {})[name] || {}), ...s, $ref: undefined };
  }
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const options = s.anyOf || s.oneOf;
  if (Array.isArray(options) && options.length) {
    const chosen = options.find((x) => x.type !== "null");
    return chosen ? skeleton(chosen, defs, depth + 1) : null;
  }
  let type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  if (!type && s.properties) type = "object";
  if (type === "object") {
    const out = {};
    for (const [key, sub] of Object.entries(s.properties || {})) out[key] = skeleton(sub, defs, depth + 1);
    return out;
  }
  if (type === "array") return [];
  if (type === "string") return "";
  if (type === "integer" || type === "number") return 0;
  if (type === "boolean") return false;
  return null;
}

const TryIt = {
  form(tool) {
    const params = tool.parameters || { properties: {} };
    const props = params.properties || {};
    const required = new Set(params.required || []);
    const fields = el("div", { dataset: { fields: "" } });
    for (const [name, schema] of Object.entries(props)) {
      const { kind, schema: s } = fieldKind(schema);
      let input;
      if (kind === "enum") {
        input = el("select", {}, el("option", { value: "", text: "(not given)" }),
          s.enum.map((v) => el("option", { value: JSON.stringify(v), text: JSON.stringify(v) })));
      } else if (kind === "boolean") {
        input = el("select", {}, el("option", { value: "", text: "(not given)" }),
          el("option", { value: "true", text: "true" }), el("option", { value: "false", text: "false" }));
      } else if (kind === "json") {
        const shape = json(skeleton(schema, params.$defs), 0);
        // The box shows the skeleton of the value's fields; an empty box sends nothing.
        input = el("textarea", { placeholder: shape, dataset: { skeleton: shape } });
      } else {
        input = el("input", { type: "text", inputmode: kind === "string" ? null : "decimal" });
      }
      input.dataset.input = name;
      input.dataset.kind = kind;
      input.setAttribute("aria-label", name);
      if (s.default !== undefined && kind !== "enum" && kind !== "boolean" && kind !== "json") {
        input.placeholder = "default " + JSON.stringify(s.default);
      }
      const hint = [schema.description, kind === "json" ? "JSON value" : null].filter(Boolean).join(" · ");
      fields.append(
        el("div", { class: "field", dataset: { field: name } },
          el("label", { text: name + (required.has(name) ? " *" : "") }),
          input,
          hint ? el("div", { class: "hint", text: hint }) : null,
          el("div", { class: "field-error", dataset: { fieldError: name } }),
        ),
      );
    }
    const raw = el("textarea", { dataset: { rawJson: "" }, hidden: true, rows: 8, "aria-label": "arguments as JSON" });
    const scopes = tool.flags.scopes.map((scope) =>
      el("label", { class: "chip" }, el("input", { type: "checkbox", dataset: { scope } }), " grant " + scope),
    );
    const output = el("div", { class: "output", dataset: { output: "" } });
    const form = el(
      "form",
      { class: "try", dataset: { tryForm: tool.name, callState: "idle", mode: "fields" } },
      el("h3", { text: "Try it" }),
      Object.keys(props).length ? fields : el("p", { class: "muted", text: "no parameters" }),
      raw,
      el("div", { class: "form-error", dataset: { formError: "" } }),
      scopes.length ? el("div", { dataset: { scopes: "" } }, scopes) : null,
      el("div", { class: "actions" },
        el("button", { type: "submit", class: "primary", dataset: { submit: "" }, text: "Run" }),
        el("button", { type: "button", dataset: { rawToggle: "" }, text: "Raw JSON", onclick: () => this.toggleRaw(form) }),
        el("span", { class: "muted", dataset: { callNote: "" } }),
      ),
      output,
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit(tool, form).catch((err) => this.fail(form, err));
    });
    return form;
  },

  collect(form) {
    const args = {};
    for (const input of form.querySelectorAll("[data-input]")) {
      const value = input.value;
      if (value === "") continue;
      const kind = input.dataset.kind;
      if (kind === "integer" || kind === "number") {
        const n = Number(value);
        args[input.dataset.input] = value.trim() !== "" && Number.isFinite(n) ? n : value;
      } else if (kind === "boolean") {
        args[input.dataset.input] = value === "true";
      } else if (kind === "enum" || kind === "json") {
        try {
          args[input.dataset.input] = JSON.parse(value);
        } catch (_) {
          args[input.dataset.input] = value; // sent as text: the server says what is wrong
        }
      } else {
        args[input.dataset.input] = value;
      }
    }
    return args;
  },

  toggleRaw(form) {
    const raw = $("[data-raw-json]", form);
    const fields = $("[data-fields]", form);
    if (form.dataset.mode === "fields") {
      raw.value = json(this.collect(form));
      raw.hidden = false;
      if (fields) fields.hidden = true;
      form.dataset.mode = "raw";
    } else {
      raw.hidden = true;
      if (fields) fields.hidden = false;
      form.dataset.mode = "fields";
    }
  },

  clearErrors(form) {
    for (const node of form.querySelectorAll("[data-field-error]")) {
      node.textContent = "";
      delete node.dataset.errorCode;
      node.parentElement.classList.remove("invalid");
    }
    const general = $("[data-form-error]", form);
    general.textContent = "";
    delete general.dataset.errorCode;
  },

  async submit(tool, form, confirm = null) {
    this.clearErrors(form);
    let args;
    if (form.dataset.mode === "raw") {
      try {
        args = JSON.parse($("[data-raw-json]", form).value || "{}");
      } catch (err) {
        $("[data-form-error]", form).textContent = "the raw arguments are not valid JSON: " + err.message;
        return;
      }
    } else {
      args = this.collect(form);
    }
    const scopes = [...form.querySelectorAll("[data-scope]")].filter((c) => c.checked).map((c) => c.dataset.scope);
    const body = { args, scopes };
    if (confirm) Object.assign(body, confirm);
    const output = $("[data-output]", form);
    const progress = el("pre", { class: "json", dataset: { progress: "", count: "0" } });
    const partials = el("div", { dataset: { partials: "", count: "0" } });
    output.replaceChildren(progress, partials);
    progress.hidden = true;
    form.dataset.callState = "running";
    $("[data-call-note]", form).textContent = "running…";
    let final = null;
    await postStream(`/api/tools/${encodeURIComponent(tool.name)}/call`, body, (name, data) => {
      if (name === "progress") {
        progress.hidden = false;
        const line = data.dropped ? `[${data.stream}] ${data.chunk} (${data.dropped} dropped)` : `[${data.stream}] ${data.chunk}`;
        progress.textContent += (line.endsWith("\n") ? line : line + "\n");
        progress.dataset.count = String(Number(progress.dataset.count) + 1);
      } else if (name === "partial") {
        partials.append(el("pre", { class: "json", dataset: { partial: "" }, text: "… " + json(data.response, 0) }));
        partials.dataset.count = String(Number(partials.dataset.count) + 1);
      } else if (name === "response") {
        final = data;
      } else if (name === "error") {
        throw new Error(data.error);
      }
    });
    $("[data-call-note]", form).textContent = "";
    if (!final) throw new Error("the call ended without a response");
    const response = final.response;
    if (response.status === "confirmation_required" && !confirm) {
      form.dataset.callState = "confirm";
      const answer = await Confirm.ask(tool.name, response.confirmation);
      return this.submit(tool, form, { confirm: response.confirmation.fingerprint, confirmed: answer });
    }
    this.show(form, final);
  },

  show(form, final) {
    const output = $("[data-output]", form);
    const response = final.response;
    const status = final.error_code ? "error" : "ok";
    output.append(
      el("div", { class: "status-" + status, text: final.error_code ? final.error_code : `ok · ${(final.duration_s * 1000).toFixed(1)} ms` }),
      el("pre", { class: "json", dataset: { result: "", status, errorCode: final.error_code || "", json: json(response, 0) }, text: json(response) }),
    );
    if (final.artifact !== undefined && final.artifact !== null) {
      // What the tool kept for the application: shown apart, never sent to a model.
      output.append(el("div", { class: "muted", text: "artifact (kept for the application, not sent to the model):" }),
        el("pre", { class: "json", dataset: { artifact: "", json: json(final.artifact, 0) }, text: json(final.artifact) }));
    }
    final.parts.forEach((part, index) => {
      if (part.data_url && part.mime_type.startsWith("image/")) {
        output.append(el("img", { src: part.data_url, alt: `part ${index}`, dataset: { part: String(index), mime: part.mime_type } }));
      } else {
        output.append(el("div", { class: "muted", dataset: { part: String(index), mime: part.mime_type }, text: `part ${index}: ${part.mime_type} ${part.uri || part.size + " bytes"}` }));
      }
    });
    const given = response.error && response.error.details;
    const details = Array.isArray(given) ? given : [];  // an author's own dict is in the JSON above
    let shownAtField = 0;
    for (const detail of details) {
      const loc = Array.isArray(detail.loc) ? detail.loc : [];
      const target = loc.length && form.dataset.mode === "fields" ? $(`[data-field-error="${CSS.escape(String(loc[0]))}"]`, form) : null;
      const where = target || $("[data-form-error]", form);
      const text = `${final.error_code}: ${loc.length ? loc.join(".") + ": " : ""}${detail.msg || ""}`;
      where.textContent = where.textContent ? where.textContent + "\n" + text : text;
      where.dataset.errorCode = final.error_code || "";
      if (target) {
        target.parentElement.classList.add("invalid");
        shownAtField += 1;
      }
    }
    if (final.error_code && !details.length) {
      const general = $("[data-form-error]", form);
      general.textContent = `${final.error_code}: ${(response.error && response.error.message) || ""}`;
      general.dataset.errorCode = final.error_code;
    }
    form.dataset.fieldErrors = String(shownAtField);
    form.dataset.callState = "done";
    form.dataset.resultStatus = status;
  },

  fail(form, err) {
    form.dataset.callState = "failed";
    $("[data-call-note]", form).textContent = "";
    const general = $("[data-form-error]", form);
    general.textContent = String(err.message || err);
  },
};

const Confirm = {
  ask(toolName, request) {
    const dialog = $("#confirm");
    $("#confirm-tool").textContent = toolName;
    $("#confirm-hint").textContent = request.hint || "";
    $("#confirm-args").textContent = json(request.args);
    $("#confirm-fingerprint").textContent = request.fingerprint;
    dialog.dataset.fingerprint = request.fingerprint;
    dialog.dataset.tool = toolName;
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
      dialog.returnValue = "";
      dialog.showModal();
    });
  },
};

// -- Sessions --------------------------------------------------------------------------------

const PAGE_SIZE = 200;

const Sessions = {
  list: [],
  listTimer: null,
  liveTimer: null,
  current: null, // {user, id, events: [], total, state}
  selectedIndex: null,

  reset() {
    this.current = null;
    this.list = [];
  },

  async refreshList() {
    const body = await api("/api/sessions");
    this.list = body.sessions;
    this.renderList();
  },

  renderList() {
    const rows = $("#session-list");
    rows.dataset.count = String(this.list.length);
    rows.replaceChildren(
      ...this.list.map((s) =>
        el(
          "tr",
          {
            dataset: { sessionRow: "", user: s.user_id, sessionId: s.id, pending: String(s.pending.length) },
            "aria-selected": this.current && this.current.id === s.id && this.current.user === s.user_id ? "true" : "false",
            onclick: () => (location.hash = `#sessions/${encodeURIComponent(s.user_id)}/${encodeURIComponent(s.id)}`),
          },
          el("td", { text: s.id }),
          el("td", { text: s.user_id }),
          el("td", { text: when(s.last_update_time) }),
          el("td", { text: s.pending.length ? s.pending.map((p) => p.name).join(", ") : "" }),
        ),
      ),
    );
  },

  async show(user, id) {
    const started = performance.now(); // the first page is timed from the navigation
    clearInterval(this.listTimer);
    this.listTimer = setInterval(() => {
      if (state.page === "sessions") this.refreshList().catch(() => {});
    }, 2000);
    await this.refreshList();
    clearInterval(this.liveTimer);
    if (!user || !id) {
      if (!this.current || !this.current.fresh) this.renderEmpty();
      return;
    }
    await this.open(user, id, started);
  },

  renderEmpty() {
    $("#session-detail").replaceChildren(el("p", { class: "muted", text: "Pick a session, or start a new chat." }));
  },

  newChat() {
    const id = "web-" + Math.random().toString(36).slice(2, 10);
    this.current = { user: "user", id, events: [], total: 0, state: {}, pending: [], fresh: true };
    this.selectedIndex = null;
    location.hash = `#sessions/user/${id}`;
  },

  async open(user, id, started = performance.now()) {
    const same = this.current && this.current.user === user && this.current.id === id;
    if (!same) this.selectedIndex = null;
    if (same && this.current.fresh) {
      this.render(); // a new chat: nothing is stored until the first message
      return;
    }
    const body = await api(`/api/sessions/${encodeURIComponent(user)}/${encodeURIComponent(id)}?offset=0&limit=${PAGE_SIZE}`).catch((err) => {
      if (err.status === 404) return { events: [], total: 0, state: {}, pending: [], missing: true };
      throw err;
    });
    this.current = { user, id, events: body.events, total: body.total, state: body.state, pending: body.pending, missing: !!body.missing, updated: body.last_update_time };
    this.render();
    const detail = $("#session-detail");
    detail.dataset.firstPageMs = String(Math.round(performance.now() - started));
    this.renderList();
    clearInterval(this.liveTimer);
    this.liveTimer = setInterval(() => this.poll().catch(() => {}), 1000);
  },

  async more() {
    const c = this.current;
    const body = await api(`/api/sessions/${encodeURIComponent(c.user)}/${encodeURIComponent(c.id)}?offset=${c.events.length}&limit=${PAGE_SIZE}`);
    c.events.push(...body.events);
    c.total = body.total;
    c.state = body.state;
    c.pending = body.pending;
    c.updated = body.last_update_time;
    this.render();
  },

  async poll() {
    const c = this.current;
    if (!c || c.fresh || state.page !== "sessions" || this.busy) return;
    if (c.events.length < c.total) return; // older pages still to load: the user pages
    const since = c.updated === undefined ? "" : `&since=${c.updated}`;
    const body = await api(`/api/sessions/${encodeURIComponent(c.user)}/${encodeURIComponent(c.id)}?offset=${c.events.length}&limit=${PAGE_SIZE}${since}`).catch((err) => {
      if (err.status === 404) return null;
      throw err;
    });
    if (!body || body.unchanged || this.current !== c) return;
    c.updated = body.last_update_time;
    if (body.total !== c.total || body.events.length) {
      c.events.push(...body.events);
      c.total = body.total;
      c.state = body.state;
      c.pending = body.pending;
      c.missing = false;
      this.render();
    }
  },

  render() {
    const c = this.current;
    const detail = $("#session-detail");
    detail.dataset.user = c.user;
    detail.dataset.sessionId = c.id;
    detail.dataset.total = String(c.total);
    detail.dataset.loaded = String(c.events.length);
    const timeline = el("div", { dataset: { timeline: "" } });
    let group = null;
    let last = null;
    c.events.forEach((event, index) => {
      if (!group || event.invocationId !== last) {
        last = event.invocationId;
        group = el("section", { class: "invocation", dataset: { invocation: event.invocationId || "" } },
          el("h3", {}, "invocation ", el("code", { text: event.invocationId || "(none)" }),
            state.info.pages.includes("runs") && event.invocationId
              ? el("a", { href: "#runs/" + encodeURIComponent(event.invocationId), text: " · waterfall" })
              : null));
        timeline.append(group);
      }
      group.append(this.eventNode(event, index));
    });
    const side = el("div", {},
      el("div", { class: "side-card" }, el("strong", { text: "State at selected event" }),
        el("pre", { class: "json", dataset: { stateAt: "" }, text: "select an event" })),
      el("div", { class: "side-card" }, el("strong", { text: "Raw event" }),
        el("pre", { class: "json", dataset: { rawEvent: "" }, text: "select an event" })),
      el("div", { class: "side-card" }, el("strong", { text: "Session state now" }),
        el("pre", { class: "json", dataset: { sessionState: "" }, text: json(c.state) })),
    );
    const pending = (c.pending || []).map((p) => this.pendingNode(p));
    const app = currentApp();
    const chat = el("form", { class: "chat", dataset: { chat: "" } },
      el("input", { type: "text", placeholder: app && app.replay ? "message (the replay model answers with its next scripted turn)" : "message", dataset: { chatInput: "" }, "aria-label": "message" }),
      el("button", { type: "submit", class: "primary", text: "Send" }));
    chat.addEventListener("submit", (e) => {
      e.preventDefault();
      const input = $("[data-chat-input]", chat);
      const text = input.value.trim();
      if (!text) return;
      input.value = "";
      this.send({ text }).catch((err) => showBanner(String(err.message || err)));
    });
    detail.replaceChildren(
      el("h2", {}, "Session ", el("code", { text: c.id }), el("span", { class: "muted", text: " · user " + c.user })),
      el("div", { class: "muted", dataset: { counts: "" }, text: `${c.events.length} of ${c.total} events shown` }),
      el("div", { class: "session-grid" },
        el("div", {},
          timeline,
          c.events.length < c.total ? el("button", { type: "button", dataset: { loadMore: "" }, text: `Load ${Math.min(PAGE_SIZE, c.total - c.events.length)} more`, onclick: () => this.more() }) : null,
          el("div", { dataset: { live: "" } }),
          pending,
          app && app.replay ? el("div", { class: "muted", dataset: { replayNote: "" }, text: "The agent's model is a replay (ScriptedModel): each message plays its next scripted turn." }) : null,
          state.info.chat === false ? null : chat),
        side),
    );
    if (this.selectedIndex !== null && this.selectedIndex < c.events.length) this.select(this.selectedIndex);
  },

  eventNode(event, index) {
    const parts = (event.content && event.content.parts) || [];
    const lines = [];
    for (const part of parts) {
      if (part.text && !part.thought) lines.push(el("div", { class: "text", text: clip(part.text, 2000) }));
      if (part.functionCall) {
        const call = part.functionCall;
        lines.push(el("div", { class: "call", dataset: { call: call.name, callId: call.id || "" }, text: `→ ${call.name}(${clip(json(call.args || {}, 0), 300)})` }));
      }
      if (part.functionResponse) {
        const r = part.functionResponse;
        const failed = r.response && r.response.status === "error";
        const code = failed && r.response.error ? r.response.error.code : null;
        lines.push(el("div", { class: "response" + (failed ? " error" : ""), dataset: { response: r.name, callId: r.id || "", status: failed ? "error" : "ok" }, text: `← ${r.name}: ${clip(json(r.response, 0), 300)}` + (code ? ` [${code}]` : "") }));
        if (r.artifact !== undefined && r.artifact !== null) {
          lines.push(el("div", { class: "muted artifact", dataset: { artifact: r.name, callId: r.id || "" }, text: `  artifact (not sent to the model): ${clip(json(r.artifact, 0), 300)}` }));
        }
      }
      if (part.inlineData) lines.push(el("div", { class: "muted", text: `(${part.inlineData.mimeType})` }));
    }
    if (event.progress) lines.push(el("div", { class: "muted", text: `[${event.progress.stream}] ${clip(event.progress.chunk, 300)}` }));
    if (event.errorCode) lines.push(el("div", { class: "err", dataset: { errorCode: event.errorCode }, text: `! ${event.errorCode}: ${event.errorMessage || ""}` }));
    const delta = (event.actions && event.actions.stateDelta) || {};
    const chips = Object.entries(delta).map(([k, v]) => el("span", { class: "chip delta", dataset: { deltaKey: k }, text: `${k} = ${clip(json(v, 0), 60)}` }));
    if (event.actions && event.actions.transferToAgent) chips.push(el("span", { class: "chip", text: "→ " + event.actions.transferToAgent }));
    return el(
      "div",
      { class: "event", dataset: { eventIndex: String(index), eventId: event.id, author: event.author }, onclick: () => this.select(index) },
      el("span", { class: "author", text: event.author }),
      el("span", { class: "muted", text: when(event.timestamp) }),
      lines,
      chips.length ? el("div", {}, chips) : null,
    );
  },

  pendingNode(request) {
    const original = (request.args && request.args.originalFunctionCall) || {};
    const node = el("div", { class: "pending", dataset: { pendingCall: request.name, callId: request.id } },
      `${original.name || "?"}(${clip(json(original.args || {}, 0), 200)}) waits: ${request.name}`);
    if (request.name === "request_confirmation") {
      const answer = (confirmed) => this.send({ content: { role: "user", parts: [{ functionResponse: { id: request.id, name: request.name, response: { confirmed } } }] } }).catch((err) => showBanner(String(err.message || err)));
      node.append(" ", el("button", { type: "button", dataset: { answer: "yes" }, text: "Confirm", onclick: () => answer(true) }),
        " ", el("button", { type: "button", dataset: { answer: "no" }, text: "Decline", onclick: () => answer(false) }));
    }
    return node;
  },

  async select(index) {
    const c = this.current;
    this.selectedIndex = index;
    for (const node of document.querySelectorAll("#session-detail [data-event-index]")) {
      node.setAttribute("aria-selected", node.dataset.eventIndex === String(index) ? "true" : "false");
    }
    const raw = $("[data-raw-event]");
    raw.textContent = json(c.events[index]);
    raw.dataset.eventIndex = String(index);
    const body = await api(`/api/sessions/${encodeURIComponent(c.user)}/${encodeURIComponent(c.id)}?offset=0&limit=0&state_at=${index}`);
    const target = $("[data-state-at]");
    if (this.current !== c || this.selectedIndex !== index || !target) return;
    target.textContent = json(body.state_at);
    target.dataset.json = json(body.state_at, 0);
    target.dataset.eventIndex = String(index);
  },

  async send(message) {
    const c = this.current;
    const live = $("[data-live]");
    this.busy = true;
    const detail = $("#session-detail");
    detail.dataset.chatState = "running";
    try {
      await postStream(`/api/sessions/${encodeURIComponent(c.user)}/${encodeURIComponent(c.id)}/messages`, message, (name, data) => {
        if (name === "event") {
          if (!data.partial) live.append(this.eventNode(data, -1));
        } else if (name === "error") {
          live.append(el("div", { class: "err", text: data.error }));
        }
      });
    } finally {
      this.busy = false;
    }
    c.fresh = false;
    await this.refreshList();
    await this.open(c.user, c.id);
    // fetch everything new (the live area is replaced by the stored events)
    while (this.current.events.length < this.current.total) await this.more();
    $("#session-detail").dataset.chatState = "done";
  },
};

// -- Runs ------------------------------------------------------------------------------------

const Runs = {
  loaded: null,
  list: [],

  async show(id) {
    if (this.loaded !== state.app) {
      const body = await api("/api/invocations");
      this.list = body.invocations;
      this.loaded = state.app;
    }
    const rows = $("#invocation-list");
    rows.dataset.count = String(this.list.length);
    rows.replaceChildren(
      ...this.list.map((inv) =>
        el("tr", { dataset: { invocationRow: "", invocationId: inv.id }, "aria-selected": inv.id === id ? "true" : "false",
          onclick: () => (location.hash = "#runs/" + encodeURIComponent(inv.id)) },
          el("td", {}, el("code", { text: clip(inv.id, 18) })),
          el("td", { text: inv.agent || "" }),
          el("td", { text: when(inv.start_time) }),
          el("td", { text: inv.duration_ms.toFixed(0) })),
      ),
    );
    if (!id) {
      $("#run-detail").replaceChildren(el("p", { class: "muted", text: this.list.length ? "Pick an invocation." : "No spans stored yet: run an agent with agent-core run --trace-db PATH." }));
      return;
    }
    const body = await api(`/api/invocations/${encodeURIComponent(id)}/spans`);
    this.render(id, body);
  },

  render(id, body) {
    const bars = body.bars;
    const total = Math.max(body.duration_ns, 1);
    const pct = (ns) => ((ns / total) * 100).toFixed(4) + "%";
    const byCall = Object.fromEntries(bars.filter((b) => b.call_id).map((b) => [b.call_id, b]));
    const rows = bars.map((bar) => {
      const track = el("div", { class: "wf-track" });
      if (bar.wait_start_ns !== null && bar.wait_start_ns < bar.start_ns) {
        track.append(el("span", { class: "wf-wait", dataset: { wait: "" }, style: `left:${pct(bar.wait_start_ns)};width:${pct(bar.start_ns - bar.wait_start_ns)}` }));
      }
      track.append(el("span", { class: `wf-run ${bar.kind}${bar.error ? " failed" : ""}`, style: `left:${pct(bar.start_ns)};width:${pct(bar.end_ns - bar.start_ns)}`, title: `${bar.name}: ${((bar.end_ns - bar.start_ns) / 1e6).toFixed(1)} ms` }));
      const reasons = bar.wait_reasons || [];
      const waited = (bar.waited_for || []).map((cid, i) => {
        const name = byCall[cid] ? byCall[cid].label : cid;
        return new Set(reasons).size > 1 && reasons[i] ? `${name} [${reasons[i]}]` : name;
      });
      const why = bar.kind === "tool" && (bar.waited_for || []).length
        ? el("div", { class: "wf-why", dataset: { why: "" } }, `waited ${((bar.start_ns - bar.wait_start_ns) / 1e6).toFixed(1)} ms for ${waited.join(", ")} (${bar.wait_reason || "order"})`)
        : null;
      return el("div", {
        class: "wf-row",
        dataset: {
          bar: "", kind: bar.kind, spanId: bar.span_id, name: bar.name, callId: bar.call_id || "",
          callIndex: bar.call_index === null ? "" : String(bar.call_index),
          startNs: String(bar.start_ns), endNs: String(bar.end_ns),
          waitStartNs: bar.wait_start_ns === null ? "" : String(bar.wait_start_ns),
          waitedFor: (bar.waited_for || []).join(","), waitReason: bar.wait_reason || "",
          conflictKey: bar.conflict_key || "", error: bar.error || "",
        },
      },
      el("div", { class: "wf-label", style: `padding-left:${bar.depth * 12}px`, title: bar.name }, bar.label),
      track, why);
    });
    $("#run-detail").replaceChildren(
      el("h2", {}, "Invocation ", el("code", { text: id })),
      el("div", { class: "muted" }, `${(total / 1e6).toFixed(1)} ms · ${bars.length} spans`,
        el("span", { class: "legend" }, el("span", { style: "background:var(--model)" }), "model call",
          el("span", { style: "background:var(--tool)" }), "tool call",
          el("span", { style: "background:var(--wait)" }), "queue wait")),
      el("div", { class: "waterfall", dataset: { waterfall: id, spanCount: String(bars.length) } }, rows),
    );
  },
};

start();
