"""`make run`'s closing banner: the pages to try, and the staff user `admin` (its password on the first start).

Run as `python -m accounts.run_banner`: it creates `admin` when there is none
(accounts/first_admin.py) and prints the banner, which the Makefile hands to
the process manager (edge/procfile.py) to print once every process is up, so
that start-up's output cannot scroll the password away.
"""

import os

from accounts.first_admin import USERNAME
from config.env import env_bool


def reset_command() -> str:
    """How to choose a new password for `admin`, in the environment this start has (settings need it too)."""
    debug = env_bool("DEBUG", False)
    command = f"{'DEBUG=1 ' if debug else ''}.venv/bin/python manage.py changepassword {USERNAME}"
    same = [name for name in ("SECRET_KEY", "DATABASE_URL", "FLOWGATE_VAR_DIR") if os.environ.get(name)]
    if debug and "SECRET_KEY" in same:
        same.remove("SECRET_KEY")
    return f"{command}  (with this start's {' and '.join(same)})" if same else command


def run_banner(*, password: str | None, base_url: str, hooks_url: str, mcp_url: str) -> str:
    """The banner; `password` is the one just given to `admin`, None when it was given on an earlier start."""
    if password is not None:
        account = f"user {USERNAME}, password: {password}  (shown on this first start only)"
    else:
        account = f"user {USERNAME}; its password was shown on the first start"
    return "\n".join(
        [
            f"Flowgate is running on {base_url}",
            f"  about         {base_url}/",
            f"  catalog feed  {base_url}/catalog/v1/apps",
            f"  one app       {base_url}/catalog/v1/apps/acorn-crm",
            f"  bulk          {base_url}/catalog/v1/bulk",
            f"  OpenAPI       {base_url}/catalog/v1/openapi.json",
            f"  MCP           {mcp_url}/mcp  (for an AI agent: docs/mcp.md)",
            f"  sign up       {base_url}/signup  (the confirmation mail is printed in this window)",
            f"  your pages    {base_url}/account/  (your automations, their runs, your connected agents)",
            f"  admin         {base_url}/admin/",
            f"                {account}",
            f"                to choose a new password: {reset_command()}",
            f"  webhooks and web services on {hooks_url} (the hooks process)",
            '  try the demo automation: curl -d \'{"email": "ada@example.com"}\' <its web service or webhook URL>',
            "  try the approval demo: send it the curl printed above, then approve or reject on its approval link",
            "  try the contact form and the chat widget: open their form URL and chat widget URL above",
            "  Ctrl-C stops every process",
        ]
    )


def main() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    from django.conf import settings

    from accounts.first_admin import ensure_first_admin

    password = ensure_first_admin()
    urls = {"base_url": settings.BASE_URL, "hooks_url": settings.HOOKS_URL, "mcp_url": settings.MCP_URL}
    print(run_banner(password=password, **urls))


if __name__ == "__main__":
    main()
