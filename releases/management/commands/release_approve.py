from releases import services
from releases.management.commands._release_common import ReleaseStepCommand


class Command(ReleaseStepCommand):
    help = "Approve a release (NAME@X.Y.Z); curators only."
    step = staticmethod(services.release_approve)
