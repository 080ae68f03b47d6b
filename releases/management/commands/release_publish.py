from releases import services
from releases.management.commands._release_common import ReleaseStepCommand


class Command(ReleaseStepCommand):
    help = "Publish a release (NAME@X.Y.Z); curators only."
    step = staticmethod(services.release_publish)
