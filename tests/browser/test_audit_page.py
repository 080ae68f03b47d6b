"""An audit's page in a real browser on a desktop (1366x900) and a phone (390x844): the
baselines table, the data map with its three regions and the AfLite section, nothing
wider than the window but the tables' own scroll boxes. WINNOW_SCREENSHOTS=DIR keeps the
screenshots."""

import os
from pathlib import Path

import pytest

from evaluation.audit.services import audit_create, audit_run_here, source_of_collection
from evaluation.models import AuditStatus
from tests.evaluation import audit_helpers
from tests.evaluation.audit_helpers import AFLITE_SMALL, make_wsc

audit_models_dir = audit_helpers.audit_models_dir  # fixtures of the audit tests
audit_registry = audit_helpers.audit_registry

pytestmark = pytest.mark.django_db(transaction=True)

VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


def _shoot(page, name: str) -> None:
    folder = os.environ.get("WINNOW_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("device", VIEWPORTS)
def test_the_audit_page_fits_the_window_and_draws_the_map(page, login, curator, audit_registry, device):
    make_wsc(24)
    audit = audit_create(
        source=source_of_collection("wsc", "wsc-audit"),
        model="tiny-causal",
        folds=3,
        epochs=3,
        repeats=2,
        aflite=AFLITE_SMALL,
        created_by=curator,
    )
    audit = audit_run_here(audit=audit)
    assert audit.status == AuditStatus.DONE, audit.error
    page.set_viewport_size(VIEWPORTS[device])
    login(page, curator)
    page.goto(f"/evaluation/audits/{audit.pk}/")
    page.locator("#table-baselines").wait_for()
    chart = page.locator("svg[data-chart=cartography]")
    assert chart.is_visible()
    assert page.locator("svg[data-chart=cartography] circle").count() == 24
    for region in ("easy-to-learn", "hard-to-learn", "ambiguous"):
        assert page.locator("svg[data-chart=cartography] text.region", has_text=region).count() == 1
    # the map shrinks to 30rem at least and scrolls inside its box (the charts' rule)
    box = page.locator("#cartography .chart-box").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORTS[device]["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORTS[device]["width"]
    assert page.locator("#aflite").is_visible()
    _shoot(page, f"audit-{device}")
