"""The data sets a release holds, as one enum (pure: no Django).

Every comparison with a data set goes through :class:`Dataset` (``releases.models.ReleaseDataset``
is its Django field's choices, with the same values); tests/test_architecture.py fails on a
comparison with a quoted data-set name anywhere else.
"""

from enum import StrEnum


class Dataset(StrEnum):
    WSC = "wsc"
    WINOWHY = "winowhy"
    COMVE = "comve"
    SENMAKING = "senmaking"

    @property
    def reads_as(self) -> "Dataset":
        """The data set whose files and evaluation this one shares (Sen-Making is ComVE's)."""
        return Dataset.COMVE if self is Dataset.SENMAKING else self

    @property
    def is_comve(self) -> bool:
        return self.reads_as is Dataset.COMVE


#: Every data set's value, in the enum's order.
DATASET_VALUES: tuple[str, ...] = tuple(d.value for d in Dataset)
