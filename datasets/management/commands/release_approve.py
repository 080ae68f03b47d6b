from datasets.management.commands._release_common import ReleaseStepCommand
from datasets.releases import services


class Command(ReleaseStepCommand):
    help = "Approve a release (NAME@X.Y.Z); curators only."
    step = staticmethod(services.release_approve)
