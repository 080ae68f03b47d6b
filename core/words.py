"""The words a page or a card prints for the code names of figures and table columns
(pure: no Django). ``fleiss_kappa`` is "Fleiss' kappa", ``items_pairable`` "items with two
or more judgments"; a figure without a value reads "no value", never "undefined"."""

#: code name -> plain words (a column header or a figure's name)
WORDS: dict[str, str] = {
    "fleiss_kappa": "Fleiss' kappa",
    "pairwise_agreement": "Average pairwise agreement",
    "krippendorff_alpha": "Krippendorff's alpha",
    "majority_agreement": "Agreement with the majority",
    "gold_accuracy": "Accuracy on gold items",
    "items_pairable": "Items with two or more judgments",
    "items_judged": "items judged",
    "judgments": "judgments",
    "annotators": "annotators",
    "annotator": "Annotator",
    "annotator_a": "Annotator",
    "annotator_b": "Other annotator",
    "compared_with_majority": "Answers compared with the majority",
    "agreed_with_majority": "Answers that agreed",
    "gold_seen": "Gold items answered",
    "gold_correct": "Gold items right",
    "items": "Items",
    "observed_agreement": "Observed agreement",
    "cohen_kappa": "Cohen's kappa",
    "undefined": "Why no value",
    "origin": "Reason origin",
    "score": "Plausibility score",
    "reasons": "Reasons",
    "knowledge_type": "Knowledge type",
    "count": "Count",
    "unit": "Counted",
    "share": "Share of the judgments",
}


def words(code: str) -> str:
    """The plain words for ``code``; an unknown code with its underscores as spaces."""
    return WORDS.get(code, code.replace("_", " "))


def no_value(reason: str | None) -> str:
    """What a figure without a value reads: "no value (one category only)"."""
    return f"no value ({reason})" if reason else "no value"


def number(value: float | int | None, digits: int = 3) -> str:
    """A figure to a sensible precision: integers as they are, others to ``digits``
    significant digits (-41.59367561340332 -> -41.6, 0.61234 -> 0.612); "–" for none."""
    if value is None:
        return "–"
    if isinstance(value, int) or (float(value).is_integer() and abs(value) >= 1):
        return f"{int(value):,}"
    if abs(value) >= 10**digits:
        return f"{value:,.0f}"
    return f"{float(value):.{digits}g}"
