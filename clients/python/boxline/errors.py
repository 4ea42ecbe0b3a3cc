"""Errors of the Boxline server: one class per status the client handles on its own."""
from typing import Any, Dict, List, Optional

from .models import PartitionRef


class BoxlineError(Exception):
    """An error answer: the HTTP status, the server's short code and its sentence."""

    def __init__(self, status: int, error: str, message: str,
                 body: Optional[Dict[str, Any]] = None):
        super().__init__("%d %s: %s" % (status, error, message))
        self.status = status
        self.error = error
        self.message = message
        self.body = body or {}


class BadRequest(BoxlineError):
    """400: a name, parameter or body is not valid (for a settle: a bug in the client)."""


class Unauthorized(BoxlineError):
    """401: no token, or one the server does not know."""


class Forbidden(BoxlineError):
    """403: the token's role or namespaces do not allow this."""


class NotFound(BoxlineError):
    """404: no such topic, subscription, event or endpoint."""


class Conflict(BoxlineError):
    """409: for a settle, `refused` names the partitions the member no longer holds."""

    @property
    def refused(self) -> List[PartitionRef]:
        return [PartitionRef.from_json(r) for r in self.body.get("refused") or []]

    @property
    def settled(self) -> Optional[int]:
        return self.body.get("settled")


class Unavailable(BoxlineError):
    """503: overloaded, shutting down or too many streams; `retry_after` in seconds when given."""

    def __init__(self, status, error, message, body=None, retry_after=None):
        super().__init__(status, error, message, body)
        self.retry_after = retry_after


_BY_STATUS = {400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict}


def error_for(status: int, body: Dict[str, Any], retry_after: Optional[float] = None) -> BoxlineError:
    error = str(body.get("error", "http_%d" % status))
    message = str(body.get("message", "the server answered %d" % status))
    if status == 503:
        return Unavailable(status, error, message, body, retry_after)
    return _BY_STATUS.get(status, BoxlineError)(status, error, message, body)
