"""A made-up demo catalog in the import format, generated deterministically from a seed.

Every name is invented from the word lists below; no vendor's catalog is
copied. The same arguments always give the same document.
"""

import base64
import random
from datetime import UTC, datetime, timedelta

_BRANDS = (
    "Acorn Alpine Amber Apex Arbor Aster Atlas Aurora Beacon Birch Bloom Bolt Brook Cedar Cinder Cirrus Clover "
    "Cobalt Comet Coral Crest Cypress Delta Drift Ember Echo Fable Fern Fjord Flint Forge Garnet Glade Granite "
    "Harbor Hazel Helix Heron Indigo Iris Jade Juniper Kestrel Lark Lumen Maple Marble Meadow Mesa Mint Nimbus "
    "Nova Oak Onyx Opal Orbit Pebble Pine Pixel Plume Prism Quartz Quill Raven Reef Ridge River Rowan Sable Sage "
    "Sequoia Slate Sparrow Spruce Summit Talon Thistle Tidal Topaz Tundra Umber Vale Vertex Willow Zephyr"
).split()
_PRODUCTS = {
    "CRM": ("contact", "deal", "company"),
    "Email": ("subscriber", "campaign", "email"),
    "Spreadsheets": ("row", "worksheet", "spreadsheet"),
    "Project Management": ("task", "project", "comment"),
    "Forms": ("submission", "form", "response"),
    "Payments": ("payment", "invoice", "customer"),
    "Support": ("ticket", "reply", "customer"),
    "Calendar": ("event", "calendar", "attendee"),
    "Storage": ("file", "folder", "link"),
    "Chat": ("message", "channel", "member"),
    "E-commerce": ("order", "product", "customer"),
    "Accounting": ("invoice", "bill", "expense"),
    "HR": ("employee", "time-off request", "candidate"),
    "Marketing": ("lead", "audience", "campaign"),
    "Developer Tools": ("issue", "pull request", "build"),
}
_SUFFIX = {
    "CRM": "CRM",
    "Email": "Mail",
    "Spreadsheets": "Sheets",
    "Project Management": "Tasks",
    "Forms": "Forms",
    "Payments": "Pay",
    "Support": "Desk",
    "Calendar": "Calendar",
    "Storage": "Drive",
    "Chat": "Chat",
    "E-commerce": "Shop",
    "Accounting": "Books",
    "HR": "People",
    "Marketing": "Reach",
    "Developer Tools": "Code",
}
_AUTH_TYPES = ("oauth_v2", "oauth_v2", "oauth_v2", "api_key", "api_key", "none", "managed_auth", "token_mint")
_COLOURS = ("#2563eb", "#16a34a", "#db2777", "#ea580c", "#7c3aed", "#0891b2", "#ca8a04", "#dc2626", "#4f46e5")


def _logo(initials: str, colour: str) -> dict:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">'
        f'<rect width="64" height="64" rx="14" fill="{colour}"/>'
        '<text x="32" y="41" font-family="sans-serif" font-size="24" font-weight="700" '
        f'text-anchor="middle" fill="#fff">{initials}</text></svg>'
    )
    return {"content_type": "image/svg+xml", "base64": base64.b64encode(svg.encode()).decode()}


def _operations(rng: random.Random, brand: str, things: tuple, domain: str, count: int) -> tuple[list, list]:
    triggers, actions = [], []
    for thing in things:
        plural = thing + "s"
        path = plural.replace(" ", "_")
        triggers += [
            {
                "key": f"new_{path}",
                "name": f"New {thing.title()}",
                "description": f"Triggers when a new {thing} is created in {brand}.",
                "endpoint": f"https://api.{domain}/v1/hooks",
                "http_method": "POST",
                "delivery_mode": rng.choice(["manual", "self_registering"]),
                "request_template": {"event": f"{path}.created"},
            },
            {
                "key": f"updated_{path}",
                "name": f"Updated {thing.title()}",
                "description": f"Triggers when an existing {thing} changes.",
                "endpoint": f"https://api.{domain}/v1/hooks",
                "http_method": "POST",
                "delivery_mode": "self_registering",
                "request_template": {"event": f"{path}.updated"},
            },
        ]
        actions += [
            {
                "key": f"create_{path}",
                "name": f"Create {thing.title()}",
                "description": f"Creates a new {thing}.",
                "endpoint": f"https://api.{domain}/v1/{path}",
                "http_method": "POST",
                "request_template": {"name": "{{name}}"},
            },
            {
                "key": f"find_{path}",
                "name": f"Find {thing.title()}",
                "description": f"Finds a {thing} by a field you choose.",
                "endpoint": f"https://api.{domain}/v1/{path}/search",
                "http_method": "GET",
                "request_template": {"q": "{{query}}"},
            },
            {
                "key": f"update_{path}",
                "name": f"Update {thing.title()}",
                "description": f"Changes fields of an existing {thing}.",
                "endpoint": f"https://api.{domain}/v1/{path}/{{{{id}}}}",
                "http_method": "PATCH",
                "request_template": {},
            },
            {
                "key": f"delete_{path}",
                "name": f"Delete {thing.title()}",
                "description": f"Removes a {thing}.",
                "endpoint": f"https://api.{domain}/v1/{path}/{{{{id}}}}",
                "http_method": "DELETE",
                "request_template": {},
            },
        ]
    rng.shuffle(triggers)
    rng.shuffle(actions)
    n_triggers = max(1, count // 3)
    return triggers[:n_triggers], actions[: max(1, count - n_triggers)]


def demo_document(apps: int = 240, operations: int | None = None, seed: int = 7, now: datetime | None = None) -> dict:
    """A catalog of `apps` invented apps, each with `operations` operations (4 to 12 when not given).

    About one in six apps is unranked (popularity 0), a few are retired
    within the window, one is retired past it, one is unpublished and about
    one in twenty has no logo, so every feed state shows up in the demo.
    """
    rng = random.Random(seed)
    # Whole days, so loading the demo twice on one day changes nothing.
    now = now or datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    categories = list(_PRODUCTS)
    entries, used = [], set()
    for index in range(apps):
        brand = _BRANDS[index % len(_BRANDS)]
        category = categories[(index * 7 + index // len(_BRANDS)) % len(categories)]
        name = f"{brand} {_SUFFIX[category]}"
        if index >= len(_BRANDS) * len(categories):
            name += f" {index // (len(_BRANDS) * len(categories)) + 1}"
        slug = name.lower().replace(" ", "-")
        if slug in used:
            slug, name = f"{slug}-{index}", f"{name} {index}"
        used.add(slug)
        domain = slug.replace("-", "") + ".example"
        triggers, actions = _operations(
            rng, name, _PRODUCTS[category], domain, operations if operations is not None else rng.randint(4, 12)
        )
        if operations is not None:
            triggers, actions = _pad(triggers, actions, operations)
        entry = {
            "slug": slug,
            "name": name,
            "description": f"{name} is a made-up {category.lower()} app for trying out Flowgate.",
            "category": None if index % 23 == 5 else category,
            "auth_type": _AUTH_TYPES[rng.randrange(len(_AUTH_TYPES))],
            "app_domain": domain,
            "popularity": 0 if index % 6 == 5 else int(1_000_000 / (1 + index) ** 1.1) + rng.randint(0, 50),
            "published": index != 13,
            "retired_at": None,
            "auth_config": {"client_id": f"demo-{slug}", "scopes": ["read", "write"]},
            "logo": (
                None if index % 20 == 19 else _logo(brand[:1] + _SUFFIX[category][:1], _COLOURS[index % len(_COLOURS)])
            ),
            "triggers": triggers,
            "actions": actions,
        }
        if index in (17, 42):
            entry["retired_at"] = (now - timedelta(days=30 + index)).isoformat()
        if index == 66:
            entry["retired_at"] = (now - timedelta(days=400)).isoformat()
        entries.append(entry)
    return {"apps": entries}


def _pad(triggers: list, actions: list, count: int) -> tuple[list, list]:
    """Repeat operations with numbered keys until there are exactly `count`, for benchmark catalogs."""
    base = triggers + actions
    result = list(base)
    copy = 2
    while len(result) < count:
        for op in base:
            if len(result) == count:
                break
            result.append({**op, "key": f"{op['key']}_{copy}", "name": f"{op['name']} ({copy})"})
        copy += 1
    result = result[:count]
    n_triggers = max(1, count // 3)
    return result[:n_triggers], result[n_triggers:]
