from django.core.management.base import BaseCommand, CommandError

from apps.audit.services import Actor
from apps.workflows.services import create_api_key


class Command(BaseCommand):
    help = "Issue an API key for a source, scoped to workflow types. The key is printed once."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("--source", required=True)
        parser.add_argument("--workflow-types", required=True, help="comma-separated names")
        parser.add_argument("--test", action="store_true", help="mark the source's cases as test")

    def handle(self, *args, **options):  # type: ignore[no-untyped-def]
        names = [n.strip() for n in options["workflow_types"].split(",") if n.strip()]
        if not names:
            raise CommandError("--workflow-types needs at least one name")
        try:
            _, plain = create_api_key(
                source_name=options["source"],
                workflow_type_names=names,
                is_test=options["test"],
                acting=Actor.system("create_api_key"),
            )
        except ValueError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(plain)
