from django import forms

from evaluation.models import Method


class RunStartForm(forms.Form):
    release = forms.CharField(
        max_length=500,
        help_text="NAME@VERSION of a release, or the folder of an exported release on the server",
    )
    method = forms.ChoiceField(choices=Method.choices)
    model_path = forms.CharField(
        max_length=500, required=False, help_text="Local Hugging Face folder or GGUF file on the server"
    )
    predictions = forms.FileField(required=False, help_text="For the method 'uploaded predictions'")
    seed = forms.IntegerField(initial=0, min_value=0)
    limit = forms.IntegerField(required=False, min_value=1, help_text="Score only the first N items")
    generate_explanations = forms.BooleanField(
        required=False,
        help_text="ComVE with a causal LM: generate subtask C explanations and score their BLEU",
    )
