"""The Jobs page in a real browser: the list, one job, Cancel, and Resolve."""

from __future__ import annotations

import json

from _browser import browser_fixture, page_fixture, ready, run_async, screenshot  # noqa: F401
from test_web_jobs_api import filled_app

from agent_core import JobStatus


def test_cancel_a_pending_job_and_resolve_one_in_doubt(page, tmp_path) -> None:
    with filled_app(tmp_path, run_async) as filled:
        ready(page, filled.server.url + "#jobs")
        page.wait_for_selector('[data-job-list][data-count="3"]')
        statuses = page.eval_on_selector_all(
            "[data-job-row]", "rows => rows.map(r => [r.dataset.jobId, r.dataset.status])"
        )
        assert dict(statuses) == {
            filled.done: "SUCCEEDED",
            filled.doubt: "IN_DOUBT",
            filled.pending: "PENDING",
        }
        progress = page.inner_text(
            f'[data-job-row][data-job-id="{filled.done}"] [data-job-progress-cell]'
        )
        assert json.loads(progress) == {"written": 2, "of": 2}
        # The finished job: its arguments, progress and response, and nothing to do.
        page.click(f'[data-job-row][data-job-id="{filled.done}"]')
        page.wait_for_selector(f'#job-detail[data-job-id="{filled.done}"]')
        assert json.loads(page.inner_text("[data-job-args]")) == {"topic": "tides"}
        assert json.loads(page.inner_text("[data-job-response]")) == {"report": "all about tides"}
        assert json.loads(page.inner_text("[data-job-progress]")) == {"written": 2, "of": 2}
        assert page.locator("[data-job-cancel], [data-resolve-form]").count() == 0

        # Cancel the pending one.
        page.click(f'[data-job-row][data-job-id="{filled.pending}"]')
        page.wait_for_selector(
            f'#job-detail[data-job-id="{filled.pending}"][data-status="PENDING"]'
        )
        page.click("[data-job-cancel]")
        page.wait_for_selector(
            f'#job-detail[data-job-id="{filled.pending}"][data-status="CANCELLED"]'
        )
        page.wait_for_selector(
            f'[data-job-row][data-job-id="{filled.pending}"][data-status="CANCELLED"]'
        )
        assert page.get_attribute("[data-job-outcome]", "data-job-outcome") == "job.cancelled"

        # Resolve the one in doubt: malformed JSON is refused on the page, then a response.
        page.evaluate(f"location.hash = '#jobs/{filled.doubt}'")
        page.wait_for_selector(f'#job-detail[data-job-id="{filled.doubt}"][data-status="IN_DOUBT"]')
        assert "was not run again" in page.inner_text("[data-job-outcome]")
        page.fill("[data-resolve-response]", '{"charged": 5,')
        page.click('[data-job-resolve="response"]')
        page.wait_for_selector("[data-job-error]:has-text('not valid JSON')")
        page.fill("[data-resolve-error]", "")
        page.click('[data-job-resolve="error"]')  # an empty message: our words, from the API
        page.wait_for_selector("[data-job-error]:has-text('error must be a message')")
        page.fill("[data-resolve-response]", '{"charged": 5, "by": "ops"}')
        screenshot(page, "jobs")
        page.click('[data-job-resolve="response"]')
        page.wait_for_selector(
            f'#job-detail[data-job-id="{filled.doubt}"][data-status="SUCCEEDED"]'
        )
        assert json.loads(page.inner_text("[data-job-response]")) == {"charged": 5, "by": "ops"}

        jobs = {j.id: j for j in run_async(filled.runner.list_jobs())}
        assert jobs[filled.pending].status is JobStatus.CANCELLED
        assert jobs[filled.doubt].status is JobStatus.SUCCEEDED
        assert jobs[filled.doubt].response == {"charged": 5, "by": "ops"}
