from django.core.management.base import BaseCommand, CommandError

from apps.audit.services import verify


class Command(BaseCommand):
    help = "Check every audit hash chain; exit non-zero at the first broken link."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("--stream", action="append", help="check only this stream")

    def handle(self, *args, **options):  # type: ignore[no-untyped-def]
        for broken in verify(options.get("stream")):
            raise CommandError(
                f"audit chain broken: stream {broken.stream} event {broken.sequence}: "
                f"{broken.problem}"
            )
        self.stdout.write(self.style.SUCCESS("audit log intact"))
