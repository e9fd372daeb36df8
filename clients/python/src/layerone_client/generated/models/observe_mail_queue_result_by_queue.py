from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ObserveMailQueueResultByQueue")


@_attrs_define
class ObserveMailQueueResultByQueue:
    """How many messages each of Postfix's queues holds.

    Attributes:
        active (int):
        deferred (int):
        hold (int):
        incoming (int):
        maildrop (int):
    """

    active: int
    deferred: int
    hold: int
    incoming: int
    maildrop: int

    def to_dict(self) -> dict[str, Any]:
        active = self.active

        deferred = self.deferred

        hold = self.hold

        incoming = self.incoming

        maildrop = self.maildrop

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "active": active,
                "deferred": deferred,
                "hold": hold,
                "incoming": incoming,
                "maildrop": maildrop,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        active = d.pop("active")

        deferred = d.pop("deferred")

        hold = d.pop("hold")

        incoming = d.pop("incoming")

        maildrop = d.pop("maildrop")

        observe_mail_queue_result_by_queue = cls(
            active=active,
            deferred=deferred,
            hold=hold,
            incoming=incoming,
            maildrop=maildrop,
        )

        return observe_mail_queue_result_by_queue
