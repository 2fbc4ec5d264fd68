"""Chat widget conversations and their messages."""

import uuid

from django.db import models


class Conversation(models.Model):
    """One visitor's conversation with one automation's chat widget, made by its first message.

    public_id is what the visitor's conversation token names (interfaces/
    chat_tokens.py); a token names a conversation before it has a row, so an
    opened widget writes nothing until its visitor says something.
    """

    public_id = models.UUIDField(unique=True, default=uuid.uuid4, editable=False)
    automation = models.ForeignKey("automations.Automation", on_delete=models.CASCADE, related_name="conversations")
    created_at = models.DateTimeField(auto_now_add=True)
    last_message_at = models.DateTimeField(auto_now=True, help_text="When the visitor last wrote.")

    class Meta:
        ordering = ["-last_message_at", "-pk"]
        indexes = [models.Index(fields=["automation", "-last_message_at"], name="chat_conversation_recent")]

    def __str__(self) -> str:
        return f"conversation {self.public_id} of automation {self.automation_id}"


class Message(models.Model):
    """A message of a conversation: a visitor's (which starts a run) or the widget's (a chat_reply step)."""

    class Role(models.TextChoices):
        VISITOR = "visitor"
        BOT = "bot", "reply"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=10, choices=Role.choices)
    text = models.TextField()
    # The run a visitor's message started; null once that run is deleted.
    run = models.ForeignKey(
        "automations.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="chat_messages"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        # A poll reads a conversation's messages after the last one it has: (conversation, id) covers it.
        indexes = [models.Index(fields=["conversation", "id"], name="chat_message_after")]

    def __str__(self) -> str:
        return f"{self.role} message {self.pk}"
