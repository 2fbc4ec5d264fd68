"""The catalog search tool: apps a user can connect, searched in the feed the catalog publishes.

The feed is built from the one visibility rule of the app picker
(catalog.selectors.connectable_apps) and serves its documents from process
memory (catalog/serving.py), so searching it costs no query, and an agent
sees exactly the apps and fields the feed publishes: names and descriptions
of operations, never endpoints or internal keys.

A feed version's ETag changes whenever any app's entry does (catalog/feed.py
hashes every entry's ETag into the list's), so an answer is kept per process
for the version it was found in, and a rebuilt feed is searched anew.

An install whose catalog has no app yet has no feed (catalog.exceptions.NoAppPublished): a search
then finds no app and says why; trying again would not help until someone publishes one.
"""

import itertools
import json

from catalog import serving
from catalog.exceptions import FeedUnavailable, NoAppPublished
from edge import process_cache
from mcp_server.tools import Encoded, Tool, ToolError

MAX_RESULTS = 50
NO_APP_PUBLISHED = {"apps": [], "message": "no app is published in this catalog yet, so no app can be found"}
FIELDS = ("slug", "name", "description", "category", "auth_type", "app_domain", "logo_url", "connect_url", "retired")
# The parsed list of a feed version (by its ETag), each entry with the text a query is looked for in; and
# The operations of each app, by the ETag of its detail document.
_parsed = process_cache.named("mcp.catalog_search", max_size=20_000)
# Recent answers, by feed version, query words and limit, with their JSON text. At most 50 apps of a few KB
# each per answer: the cap bounds a process's memory at some tens of MB, whatever queries come.
_answers = process_cache.named("mcp.catalog_answers", max_size=128)


def _entries() -> list[tuple[str, dict]]:
    document = serving.list_document()
    entries = _parsed.get(document.etag)
    if entries is None:
        apps = json.loads(document.body)["apps"]  # in the feed's popularity order
        entries = [
            (" ".join((app["name"], app["slug"], app["category"] or "", app["description"])).casefold(), app)
            for app in apps
        ]
        _parsed.set(document.etag, entries)
    return entries


def _operations(slug: str) -> dict:
    document = serving.detail_document(slug)
    if document is None:  # left the feed a moment ago
        return {"triggers": [], "actions": []}
    operations = _parsed.get((slug, document.etag))
    if operations is None:
        entry = json.loads(document.body)
        operations = {"triggers": entry["triggers"], "actions": entry["actions"]}
        _parsed.set((slug, document.etag), operations)
    return operations


def _search(words: tuple[str, ...], limit: int) -> dict:
    found = itertools.islice((app for text, app in _entries() if all(word in text for word in words)), limit)
    return {"apps": [{**{field: app[field] for field in FIELDS}, **_operations(app["slug"])} for app in found]}


def search_apps(user, arguments: dict) -> Encoded:
    """Apps whose name, slug, category or description holds every word of the query, most popular first.

    Agents repeat the same few searches; an answer kept with its text costs a dictionary lookup instead of a
    scan of the feed and the encoding of its JSON text (together half of a search's time, benchmarks/RESULTS.md).
    """
    words = tuple(arguments.get("query", "").casefold().split())
    limit = int(arguments.get("limit", 10))  # the schema's "integer" also admits 2.0 and 1e1
    try:
        key = (serving.list_document().etag, words, limit)
        answer = _answers.get(key)
        if answer is None:
            answer = Encoded.of(_search(words, limit))
            _answers.set(key, answer)
        return answer
    except NoAppPublished:
        return Encoded.of(NO_APP_PUBLISHED)
    except FeedUnavailable:
        raise ToolError("the app catalog is unavailable for a moment; try again in a minute") from None


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
