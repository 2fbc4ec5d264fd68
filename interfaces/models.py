"""The models of the pages, each defined in its own package and registered here, where Django looks for them."""

from interfaces.approvals.models import ApprovalItem, ApprovalQueue
from interfaces.chat.models import Conversation, Message
from interfaces.forms.models import FormFile
from interfaces.whitelabel.models import WhiteLabelDomain

__all__ = ["ApprovalItem", "ApprovalQueue", "Conversation", "FormFile", "Message", "WhiteLabelDomain"]
