"""One torch thread for the audit tests: their models are small, and on a busy machine
torch's waiting thread pool costs more than the second thread gains (ten times slower
under other jobs' load). The production code keeps torch's default."""

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
