from typing import Any

from django import forms
from django.core.validators import RegexValidator

from core.uploads import LimitedUploadForm, upload_name
from evaluation.cloze.services import ClozeError, ClozeSettings
from evaluation.lm.methods import Method as ScoringMethod
from evaluation.lm.modeling import NORMALIZATIONS
from evaluation.lm.registry import SMOLLM2_NAME, RegistryModel
from evaluation.lm.scorers.types import MODEL_METHODS
from evaluation.models import Method
from evaluation.runs.create import method_unfit
from evaluation.runs.errors import EvaluationError, PredictionsRefused
from releases.models import Release


def offer_choices(
    form: forms.Form, releases: list[Release], models: list[RegistryModel], *, empty: str
) -> dict[str, RegistryModel]:
    """Fill the form's release and model lists; the registry's models by name."""
    release_field, model_field = form.fields["release"], form.fields["model"]
    assert isinstance(release_field, forms.ChoiceField) and isinstance(model_field, forms.ChoiceField)
    release_field.choices = [("", "Choose a published release")] + [
        (f"{r.name}@{r.version}", f"{r.name}@{r.version} ({r.get_dataset_display()})") for r in releases
    ]
    model_field.choices = [("", empty)] + [(m.name, m.label) for m in models]
    return {m.name: m for m in models}


#: The run form's words for each of evaluation.lm.modeling.NORMALIZATIONS.
NORMALIZATION_LABELS = {"exact": "exact (the default)", "lm-eval": "lm-eval (as lm-evaluation-harness)"}


class RunStartForm(LimitedUploadForm):
    """A run on a published release, with a model of the server's registry: the web takes
    names from lists, never a path on the server. SmolLM2, the model Winnow ships, is
    preselected; the baselines and uploaded predictions ignore the model."""

    field_order = ["release", "method", "model", "name"]

    name = forms.CharField(
        max_length=100,
        required=False,
        help_text="Optional: how lists, comparisons and leaderboards name this run, e.g. "
        "'SmolLM2 partial, seed 0'",
    )
    release = forms.ChoiceField(
        error_messages={
            "invalid_choice": "Choose a published release from the list.",
            "required": "Choose a published release.",
        },
        help_text="Only published releases are scored.",
    )
    method = forms.ChoiceField(
        choices=Method.choices,
        initial=Method.PARTIAL,
        error_messages={"invalid_choice": "Choose a method from the list.", "required": "Choose a method."},
        help_text="Partial scoring (after the pronoun) is WSC's usual method; WinoWhy and ComVE use "
        "the full sentence.",
    )
    model = forms.ChoiceField(
        required=False,
        error_messages={"invalid_choice": "Choose a model from the list."},
        help_text="The models this server offers (its models folder and the models installed packages ship); "
        "the baselines and uploaded predictions use none.",
    )
    predictions = forms.FileField(required=False, help_text="For the method 'uploaded predictions'")
    start_token = forms.CharField(
        max_length=64,
        required=False,
        help_text="Causal LMs: the token every text is conditioned on: bos (default), eos, "
        "a token id or a token's text such as <|endoftext|>",
        validators=[RegexValidator(r"^\S+$", "give bos, eos, a token id or a token's text (no spaces)")],
    )
    normalization = forms.ChoiceField(
        choices=[(value, NORMALIZATION_LABELS[value]) for value in NORMALIZATIONS],
        initial="exact",
        required=False,
        error_messages={"invalid_choice": "Choose exact or lm-eval."},
        help_text="Causal LMs: exact is nearest the true log-probabilities; lm-eval gives "
        "lm-evaluation-harness's own float32 numbers, to compare with its results",
    )
    seed = forms.IntegerField(
        initial=0,
        min_value=0,
        error_messages={
            "required": "Give a seed (0 is fine).",
            "invalid": "The seed is a whole number, such as 0.",
            "min_value": "The seed cannot be negative.",
        },
    )
    limit = forms.IntegerField(
        required=False,
        min_value=1,
        help_text="Score only the first N items (WSC: schemas); empty: all",
        error_messages={
            "invalid": "The limit is a whole number of items, such as 20.",
            "min_value": "The limit is at least 1 item (leave it empty to score all).",
        },
    )
    generate_explanations = forms.BooleanField(
        required=False,
        help_text="ComVE with a causal LM: generate subtask C explanations and score their BLEU",
    )

    def __init__(
        self, *args: Any, releases: list[Release], models: list[RegistryModel], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.models = offer_choices(
            self, releases, models, empty="No model (baselines, uploaded predictions)"
        )
        self.datasets = {f"{r.name}@{r.version}": r.dataset for r in releases}
        if SMOLLM2_NAME in self.models:
            self.fields["model"].initial = SMOLLM2_NAME

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        method = data.get("method")
        if method is None:
            return data
        model = self.models.get(data.get("model") or "")
        unfit = method_unfit(method, self.datasets.get(data.get("release") or "", ""))
        if unfit:
            self.add_error(
                "method", f"{unfit[0].upper()}{unfit[1:]}: choose another method for this release."
            )
        if method in MODEL_METHODS:
            needed = ScoringMethod(method).model_kind
            if "model" in self.errors:
                pass
            elif model is None:
                self.add_error("model", f"The method '{Method(method).label}' needs a model: choose one.")
            elif model.kind != needed:
                self.add_error(
                    "model",
                    f"{model.name} is a {model.kind_label}; the method '{Method(method).label}' needs a "
                    f"{needed} LM.",
                )
        else:
            data["model"] = ""  # a baseline or uploaded predictions: the preselected model is ignored
        if method == Method.PREDICTIONS:
            if not data.get("predictions") and "predictions" not in self.errors:
                self.add_error("predictions", "Upload the predictions file for this method.")
        elif data.get("predictions"):
            self.add_error(
                "predictions", "A predictions file goes with the method 'uploaded predictions' only."
            )
        if data.get("start_token") and method not in MODEL_METHODS and "start_token" not in self.errors:
            self.add_error("start_token", "A start token applies to a model's methods only: leave it empty.")
        normalization = data.get("normalization") or "exact"
        if normalization != "exact" and ScoringMethod(method).model_kind != "causal":
            self.add_error(
                "normalization",
                f"The {normalization} normalization applies to a causal LM's methods only: choose exact.",
            )
        return data

    def service_kwargs(self) -> dict[str, Any]:
        """The cleaned form as ``evaluation_run_start``'s keywords (the page's and the API's)."""
        d = self.cleaned_data
        upload = d["predictions"]
        return {
            "release": d["release"],
            "method": d["method"],
            "model_name": d["model"],
            "upload": upload,
            "predictions_name": upload_name(upload.name or "predictions") if upload else "",
            "seed": d["seed"] or 0,
            "limit": d["limit"],
            "generate_explanations": d["generate_explanations"],
            "start_token": d["start_token"] or None,
            "normalization": d.get("normalization") or "exact",
            "name": d["name"],
        }

    def add_refusal(self, exc: EvaluationError) -> None:
        """The service's refusal on the field it concerns, as the page shows it: beside that
        field, in a sentence (a refused upload is not kept, and says so)."""
        if isinstance(exc, PredictionsRefused):
            self.add_error("predictions", f"{exc}; the file was not kept.")
        else:
            field = exc.field if exc.field in self.fields else None
            self.add_error(field, f"{str(exc)[:1].upper()}{str(exc)[1:]}.")


class ClozeStartForm(forms.Form):
    """A cloze analysis of a registry model on a published ComVE (or Sen-Making) release."""

    release = forms.ChoiceField(
        error_messages={
            "invalid_choice": "Choose a published release from the list.",
            "required": "Choose a published release.",
        },
        help_text="Published ComVE and Sen-Making releases: their subtask A pairs are read.",
    )
    model = forms.ChoiceField(
        error_messages={
            "invalid_choice": "Choose a model from the list.",
            "required": "Choose a model from the list.",
        },
        help_text="Masked LMs fill the blank; causal LMs propose and re-rank replacements.",
    )
    limit = forms.IntegerField(
        required=False, min_value=1, initial=200, help_text="Statements for experiment 1 (empty: all)"
    )
    pairs = forms.IntegerField(
        required=False, min_value=1, initial=100, help_text="Pairs for experiment 2 (empty: all)"
    )
    k = forms.IntegerField(
        min_value=2, max_value=100, initial=10, help_text="Replacements kept per masked word"
    )
    start_token = forms.CharField(
        max_length=64,
        required=False,
        help_text="Causal LMs: bos (default), eos, a token id or a token's text",
        validators=[RegexValidator(r"^\S+$", "give bos, eos, a token id or a token's text (no spaces)")],
    )

    def __init__(
        self, *args: Any, releases: list[Release], models: list[RegistryModel], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.models = offer_choices(self, releases, models, empty="Choose a model")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        model = self.models.get(data.get("model") or "")
        if model is not None and model.kind != "causal" and data.get("start_token"):
            self.add_error(
                "start_token", f"{model.name} is a {model.kind_label}: a start token is for causal LMs."
            )
        return data

    def service_kwargs(self) -> dict[str, Any]:
        """The cleaned form as ``cloze_run_queue``'s keywords (the page's and the API's)."""
        d = self.cleaned_data
        return {
            "release": d["release"],
            "model_name": d["model"],
            "settings": ClozeSettings(
                k=d["k"],
                propose_n=max(ClozeSettings.propose_n, d["k"]),
                limit=d["limit"],
                pairs=d["pairs"],
                start_token=d["start_token"] or None,
            ),
        }

    def add_refusal(self, exc: ClozeError) -> None:
        self.add_error(None, str(exc))
