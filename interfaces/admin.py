"""Django admin of the pages, registered by each package's own admin module: approval queues, white-label domains."""

from interfaces.approvals import admin as approvals_admin
from interfaces.whitelabel import admin as whitelabel_admin

__all__ = ["approvals_admin", "whitelabel_admin"]
