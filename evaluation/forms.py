from django import forms
from django.core.validators import RegexValidator

from evaluation.models import Method


class RunStartForm(forms.Form):
    # The web takes published releases by name only; a folder path on the server is for
    # the command line (a researcher must not point the server at arbitrary folders).
    release = forms.CharField(
        max_length=200,
        help_text="NAME@VERSION of a published release",
        validators=[
            RegexValidator(r"^[-a-zA-Z0-9_]+@\d+\.\d+\.\d+$", "give NAME@VERSION of a published release")
        ],
    )
    method = forms.ChoiceField(choices=Method.choices)
    model_path = forms.CharField(
        max_length=500, required=False, help_text="Local Hugging Face folder or GGUF file on the server"
    )
    predictions = forms.FileField(required=False, help_text="For the method 'uploaded predictions'")
    start_token = forms.CharField(
        max_length=64,
        required=False,
        help_text="Causal LMs: the token every text is conditioned on: bos (default), eos, "
        "a token id or a token's text such as <|endoftext|>",
        validators=[RegexValidator(r"^\S+$", "give bos, eos, a token id or a token's text (no spaces)")],
    )
    seed = forms.IntegerField(initial=0, min_value=0)
    limit = forms.IntegerField(required=False, min_value=1, help_text="Score only the first N items")
    generate_explanations = forms.BooleanField(
        required=False,
        help_text="ComVE with a causal LM: generate subtask C explanations and score their BLEU",
    )
