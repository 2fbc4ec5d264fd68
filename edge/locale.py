"""The language of pages: Django's LocaleMiddleware, whose Vary and Content-Language go on HTML pages only.

The language comes from Accept-Language (settings.LANGUAGES: English, German)
for every request, so a view's messages and templates follow it. Only pages
are translated, so only text/html responses say they vary by
Accept-Language (edge.page_headers.is_page): JSON bodies (the catalog
feed, webhook and web service answers) are the same in every language, and
a cache in front keeps one copy.
"""

from django.middleware.locale import LocaleMiddleware
from django.utils.cache import patch_vary_headers
from django.utils.translation import deactivate, get_language

from edge.page_headers import is_page


class PageLocaleMiddleware(LocaleMiddleware):
    def process_response(self, request, response):
        if is_page(response):
            patch_vary_headers(response, ("Accept-Language",))
            response.headers.setdefault("Content-Language", get_language())
        # The thread serves its next request (or task) in the default language unless that request says otherwise.
        deactivate()
        return response
