from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="FlushMailQueueResult")


@_attrs_define
class FlushMailQueueResult:
    """
    Attributes:
        deferred_retried (int): How many deferred messages Postfix was asked to try again.
    """

    deferred_retried: int

    def to_dict(self) -> dict[str, Any]:
        deferred_retried = self.deferred_retried

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "deferred_retried": deferred_retried,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        deferred_retried = d.pop("deferred_retried")

        flush_mail_queue_result = cls(
            deferred_retried=deferred_retried,
        )

        return flush_mail_queue_result
