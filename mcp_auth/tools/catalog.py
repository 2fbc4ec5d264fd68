"""The catalog search tool: apps a user can connect, by the feed's own visibility rule (catalog.selectors)."""

from django.conf import settings
from django.db.models import F, Q

from catalog.models import Operation
from catalog.selectors import connectable_apps
from mcp_auth.tools import Tool

MAX_RESULTS = 50


def search_apps(user, arguments: dict) -> dict:
    """Connectable apps whose name, slug, category or description holds the query, most popular first.

    Only what the feed publishes (SPEC 1.2): names and descriptions of
    operations, never endpoints or internal keys.
    """
    query = arguments.get("query", "").strip()
    limit = arguments.get("limit", 10)
    apps = connectable_apps()
    if query:
        apps = apps.filter(
            Q(name__icontains=query)
            | Q(slug__icontains=query)
            | Q(category__icontains=query)
            | Q(description__icontains=query)
        )
    rows = list(
        apps.order_by(F("sort_order").asc(nulls_last=True), "slug").values(
            "id", "slug", "name", "description", "category", "auth_type", "app_domain", "retired_at"
        )[:limit]
    )
    operations: dict[int, dict] = {row["id"]: {"triggers": [], "actions": []} for row in rows}
    listed = Operation.objects.filter(app_id__in=operations, listed=True).order_by("app_id", "kind", "position", "pk")
    for app_id, kind, name, description in listed.values_list("app_id", "kind", "name", "description"):
        operations[app_id]["triggers" if kind == Operation.Kind.TRIGGER else "actions"].append(
            {"name": name, "description": description}
        )
    base = settings.BASE_URL
    return {
        "apps": [
            {
                "slug": row["slug"],
                "name": row["name"],
                "description": row["description"],
                "category": row["category"],
                "auth_type": row["auth_type"],
                "app_domain": row["app_domain"],
                "retired": row["retired_at"] is not None,
                "connect_url": f"{base}/signup?app={row['slug']}",
                "logo_url": f"{base}/catalog/v1/apps/{row['slug']}/logo",
                **operations[row["id"]],
            }
            for row in rows
        ]
    }


TOOLS = (
    Tool(
        name="search_apps",
        title="Search the app catalog",
        description=(
            "Find apps that can be connected to automations, by words in their name, category or description. "
            "Returns each app's slug, name, description, how it connects (auth_type), its sign-up link, and the "
            "names and descriptions of its triggers and actions. An empty query lists the most popular apps."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": 200, "description": "Words to look for, e.g. 'crm'."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": 10},
            },
            "additionalProperties": False,
        },
        call=search_apps,
        read_only=True,
        idempotent=True,
    ),
)
