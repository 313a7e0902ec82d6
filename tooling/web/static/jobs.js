// The inspector's Jobs page: durable jobs of the app, one job, Cancel and Resolve.
// Loaded after app.js, whose helpers (el, api, json, when, $, state) it uses.
"use strict";

const JOB_STATUSES = ["PENDING", "RUNNING", "SUCCEEDED", "FAILED", "IN_DOUBT", "CANCELLED"];

const Jobs = {
  list: [],
  filter: "",
  current: null, // the job shown, whole
  listTimer: null,
  busy: false,

  reset() {
    this.list = [];
    this.current = null;
  },

  async refreshList() {
    const query = this.filter ? `?status=${encodeURIComponent(this.filter)}` : "";
    const body = await api("/api/jobs" + query);
    this.list = body.jobs;
    this.renderList();
  },

  renderList() {
    const pick = $("#job-status-filter");
    if (!pick.options.length) {
      pick.replaceChildren(el("option", { value: "", text: "any status" }),
        ...JOB_STATUSES.map((s) => el("option", { value: s, text: s })));
      pick.addEventListener("change", () => {
        this.filter = pick.value;
        this.refreshList().catch((err) => showBanner(err.message));
      });
    }
    const rows = $("#job-list");
    rows.dataset.count = String(this.list.length);
    rows.replaceChildren(
      ...this.list.map((j) =>
        el("tr", {
          dataset: { jobRow: "", jobId: j.id, status: j.status },
          "aria-selected": this.current && this.current.id === j.id ? "true" : "false",
          onclick: () => (location.hash = "#jobs/" + encodeURIComponent(j.id)),
        },
        el("td", {}, el("span", { class: `job-status ${j.status.toLowerCase()}`, text: j.status })),
        el("td", { text: j.tool }),
        el("td", { text: j.session_id, title: "user " + j.user_id }),
        el("td", { text: `${j.attempt}/${j.max_attempts}` }),
        el("td", { class: "job-progress", dataset: { jobProgressCell: "" }, title: j.progress === null ? "" : json(j.progress) },
          j.progress === null || j.progress === undefined ? "" : clip(json(j.progress, 0), 40)),
        el("td", { text: when(j.created_at) }),
        el("td", { text: when(j.finished_at) })),
      ),
    );
    const empty = $("#job-empty");
    empty.hidden = this.list.length > 0;
  },

  async show(id) {
    clearInterval(this.listTimer);
    this.listTimer = setInterval(() => {
      if (state.page !== "jobs" || this.busy) return;
      this.refreshList().catch(() => {});
      if (this.current) this.open(this.current.id, true).catch(() => {});
    }, 1500);
    await this.refreshList();
    if (!id) {
      this.current = null;
      $("#job-detail").replaceChildren(el("p", { class: "muted", text: "Pick a job." }));
      return;
    }
    await this.open(id);
  },

  async open(id, quiet = false) {
    let job;
    try {
      job = await api(`/api/jobs/${encodeURIComponent(id)}`);
    } catch (err) {
      if (err.status !== 404) throw err;
      this.current = null;
      $("#job-detail").replaceChildren(el("p", { class: "err", dataset: { jobMissing: id }, text: err.message }));
      return;
    }
    // A poll keeps what the user is typing: only a changed job is drawn again.
    if (quiet && this.current && json(this.current) === json(job)) return;
    this.current = job;
    this.render();
    this.renderList();
  },

  async act(path, body) {
    const detail = $("#job-detail");
    const said = $("[data-job-error]", detail);
    this.busy = true;
    try {
      const job = await api(path, { method: "POST", body: JSON.stringify(body || {}) });
      this.current = job;
      this.render();
      await this.refreshList();
    } catch (err) {
      if (!said) throw err;
      said.textContent = err.message;
    } finally {
      this.busy = false;
    }
  },

  section(title, value, attr) {
    return el("div", { class: "side-card" }, el("strong", { text: title }),
      el("pre", { class: "json", dataset: { [attr]: "" } }, json(value)));
  },

  render() {
    const j = this.current;
    const path = `/api/jobs/${encodeURIComponent(j.id)}`;
    const parts = [
      el("h2", {}, "Job ", el("code", { text: j.id })),
      el("p", {},
        el("span", { class: `job-status ${j.status.toLowerCase()}`, text: j.status }),
        ` ${j.tool} · session ${j.session_id} (user ${j.user_id}) · attempt ${j.attempt} of ${j.max_attempts}`,
        j.idempotent ? " · idempotent" : "",
        j.cancel_requested && j.status === "RUNNING" ? " · cancel asked for" : ""),
      el("p", { class: "muted" },
        `created ${when(j.created_at)}`,
        j.started_at ? ` · started ${when(j.started_at)}` : "",
        j.finished_at ? ` · finished ${when(j.finished_at)}` : "",
        j.delivered_at ? ` · delivered ${when(j.delivered_at)}` : ""),
      this.section("Arguments", j.args, "jobArgs"),
    ];
    if (j.progress !== null && j.progress !== undefined) parts.push(this.section("Progress", j.progress, "jobProgress"));
    if (j.response) parts.push(this.section("Response", j.response, "jobResponse"));
    if (j.error_code) {
      parts.push(el("div", { class: "side-card", dataset: { jobOutcome: j.error_code } },
        el("strong", { class: "status-error", text: j.error_code }), el("p", { text: j.error_message || "" })));
    }
    const actions = el("div", { class: "actions" });
    if (j.can_cancel) {
      actions.append(el("button", { type: "button", dataset: { jobCancel: "" }, text: "Cancel job",
        onclick: () => this.act(path + "/cancel") }));
    }
    parts.push(actions);
    if (j.can_resolve) parts.push(this.resolveForm(path));
    parts.push(el("div", { class: "form-error", dataset: { jobError: "" } }));
    const detail = $("#job-detail");
    detail.dataset.jobId = j.id;
    detail.dataset.status = j.status;
    detail.replaceChildren(...parts);
  },

  resolveForm(path) {
    const response = el("textarea", { rows: 4, "aria-label": "response as JSON", dataset: { resolveResponse: "" }, placeholder: '{"status": "ok"}' });
    const error = el("input", { type: "text", "aria-label": "failure message", dataset: { resolveError: "" }, placeholder: "why it failed" });
    const said = () => $("[data-job-error]", $("#job-detail"));
    const give = () => {
      let value;
      try {
        value = JSON.parse(response.value);
      } catch (err) {
        said().textContent = "the response is not valid JSON: " + err.message;
        return;
      }
      this.act(path + "/resolve", { response: value });
    };
    return el("form", { class: "try", dataset: { resolveForm: "" }, onsubmit: (e) => e.preventDefault() },
      el("h3", { text: "Resolve" }),
      el("p", { class: "muted", text: "The job may or may not have done its work. Say what happened: its response, a failure, or run it again." }),
      el("div", { class: "field" }, el("label", { text: "response" }), response),
      el("div", { class: "actions" }, el("button", { type: "button", class: "primary", dataset: { jobResolve: "response" }, text: "Give this response", onclick: give })),
      el("div", { class: "field" }, el("label", { text: "failure" }), error),
      el("div", { class: "actions" },
        el("button", { type: "button", dataset: { jobResolve: "error" }, text: "Fail it",
          onclick: () => this.act(path + "/resolve", { error: error.value }) }),
        el("button", { type: "button", dataset: { jobResolve: "rerun" }, text: "Run it again",
          onclick: () => this.act(path + "/resolve", { rerun: true }) })),
    );
  },
};
