"""Boxline client: publish, tail and consume over the Boxline server's HTTP API (stdlib only)."""
from .client import USER_AGENT, Client, Tail, __version__
from .errors import (BadRequest, BoxlineError, Conflict, Forbidden, NotFound, Unauthorized,
                     Unavailable)
from .member import DeadLetter, Member, Retry  # the exception; the model is models.DeadLetter
from .models import (Batch, Caller, Delivery, Error, Event, Lag, OutgoingEvent, PartitionRef,
                     Published, PublishResult, Settlement, Subscription, SubscriptionLag, Topic)

__all__ = [
    "Client", "Tail", "Member", "Retry", "DeadLetter", "USER_AGENT", "__version__",
    "BoxlineError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict",
    "Unavailable",
    "Batch", "Caller", "Delivery", "Error", "Event", "Lag", "OutgoingEvent", "PartitionRef",
    "Published", "PublishResult", "Settlement", "Subscription", "SubscriptionLag", "Topic",
]
