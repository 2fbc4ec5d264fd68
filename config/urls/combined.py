"""Every path of every host: the default URLconf, used for reverse() and when all hosts are one."""

from edge.hosts import ROLE_URLCONFS, urlconf_for

urlpatterns = urlconf_for(tuple(ROLE_URLCONFS)).urlpatterns
