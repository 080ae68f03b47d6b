"""manage.py agreement NAME [--json]: a campaign's agreement figures."""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.agreement.services import campaign_agreement_summary
from annotation.models import Campaign


def _fmt(figure: dict[str, Any], percent: bool = False) -> str:
    if figure.get("value") is None:
        return f"undefined ({figure.get('undefined')})"
    scale, unit = (100.0, "%") if percent else (1.0, "")
    text = f"{figure['value'] * scale:.4f}{unit}" if not percent else f"{figure['value'] * scale:.2f}{unit}"
    if figure.get("ci_low") is not None:
        digits = 2 if percent else 4
        text += f"  [95% CI {figure['ci_low'] * scale:.{digits}f}, {figure['ci_high'] * scale:.{digits}f}]"
    return text


class Command(BaseCommand):
    help = (
        "Print a campaign's agreement figures (Fleiss' kappa, pairwise agreement, Krippendorff's alpha, ...)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="campaign name")
        parser.add_argument("--json", action="store_true", help="print the full summary as JSON")
        parser.add_argument(
            "--identities", action="store_true", help="name annotators by username (else annotator 1..n)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(name=options["name"]).first()
        if campaign is None:
            raise CommandError(f"no campaign named {options['name']!r}")
        summary = campaign_agreement_summary(campaign=campaign, identities=options["identities"])
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False))
            return
        out = self.stdout.write
        out(
            f"campaign {summary['campaign']} ({summary['task_label']}){' [imported]' if summary['imported'] else ''}"
        )
        out(
            f"{summary['judgments']} judgments on {summary['items_judged']} of {summary['items']} items "
            f"by {summary['annotators']} annotators; answers: {', '.join(summary['categories']) or '-'}"
        )
        if not summary["applicable"]:
            out(f"no agreement figures: {summary['not_applicable']}")
            return
        f = summary["figures"]
        out(f"Fleiss' kappa:          {_fmt(f['fleiss_kappa'])}")
        out(f"pairwise agreement:     {_fmt(f['pairwise_agreement'], percent=True)}")
        out(f"Krippendorff's alpha:   {_fmt(f['krippendorff_alpha'])}")
        out(f"agreement w/ majority:  {_fmt(f['majority_agreement'], percent=True)}")
        out(f"gold accuracy:          {_fmt(f['gold_accuracy'], percent=True)}")
        out("per answer:")
        for row in summary["per_category"]:
            kappa = "undefined" if row["fleiss_kappa"] is None else f"{row['fleiss_kappa']:.4f}"
            share = "-" if row["share"] is None else f"{row['share'] * 100:.1f}%"
            out(f"  {row['category']:<16} {row['judgments']:>8} judgments  {share:>6}  kappa {kappa}")
        for group in summary["groups"]:
            out(
                f"{group['group_by']} {group['group']}: {group['items']} items, "
                f"kappa {_fmt(group['fleiss_kappa'])}, pairwise {_fmt(group['pairwise_agreement'], percent=True)}"
            )
        for note in summary["notes"]:
            out(f"note: {note}")
